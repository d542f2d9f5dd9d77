"""Lint many files: cached results first, then the rest over a pool of processes.

``lint_files`` returns one :class:`~poslint.engine.linter.FileResult` per path, in the order given,
exactly as :func:`poslint.engine.linter.lint_file` would, file by file. Files are handed to the
workers largest first, a few at a time, so that one big file does not leave the other workers
idle at the end. A run with little to do stays in this process, where starting workers
would cost more than the work.

Ctrl-C (SIGINT) or SIGTERM stops a run at once: no more files are handed out, each worker
finishes only the file it is on (so that a fix being written is written whole, or not at all),
and :class:`Interrupted` is raised. While a run lasts, SIGTERM in the main thread raises it too.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from poslint.core.source import SourceText, UndecodableSource
from poslint.engine.cache import Cache, Stat, current_digest, digest, file_stat
from poslint.engine.linter import FileResult, LintOptions, file_codes, lint_file
from poslint.fix.fixer import applicable
from poslint.fix.locations import SourceMap

# Below this much work a pool is not worth starting (fork and import cost ~50 ms a worker).
MIN_FILES_FOR_POOL = 8
MIN_BYTES_FOR_POOL = 256 * 1024
# Files handed to a worker at a time: small enough to balance, big enough to amortise the IPC.
CHUNK_BYTES = 512 * 1024
CHUNK_FILES = 32


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal (``signum``)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def interruptible():
    """SIGTERM raises :class:`Interrupted` (and Ctrl-C, as ever, ``KeyboardInterrupt``), when run in
    the main thread; elsewhere signals cannot be handled and this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def tune_gc() -> None:
    """The analysis allocates many small objects that are freed by reference counting; the cyclic
    collector's frequent young-generation passes only cost time. Keep it, but less often, and keep
    what was imported out of its way."""
    gc.freeze()
    gc.set_threshold(20000, 50, 100)


@contextmanager
def tuned_gc():
    """:func:`tune_gc` for the duration of a run, then the collector as it was (poslint may be
    called in-process, as in tests)."""
    threshold = gc.get_threshold()
    tune_gc()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


# --- one file ---------------------------------------------------------------------------------

Outcome = Tuple[FileResult, Optional[str], Optional[Stat]]  # result, digest, stat of the bytes linted


def _cacheable(result: FileResult, options: LintOptions) -> bool:
    if result.errors or result.internal_errors or result.notes or result.path.endswith(".ipynb"):
        return False
    return not options.fix or (result.fixed == 0 and not result.diff)


def _lint_one(path: str, options: LintOptions, want_digest: bool) -> Outcome:
    before = file_stat(path) if want_digest else None
    result = lint_file(path, options)
    file_digest = None
    if want_digest and before is not None and _cacheable(result, options):
        # The digest of the bytes that were linted: the file must not have changed meanwhile.
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            data = None
        if data is not None and file_stat(path) == before:
            file_digest = digest(data)
    if not result.diagnostics:
        result.source_map = None  # only findings are shown with their source; keep the pipe light
    return result, file_digest, before if file_digest else None


_OPTIONS: Optional[LintOptions] = None
_WANT_DIGEST = False
_STOP = None  # the run's multiprocessing Event: set when the run is interrupted
_SIGNALLED = False  # this worker got SIGINT or SIGTERM
_LINTING = False  # this worker is in the middle of a chunk
_CHUNK_DONE = threading.Event()  # set when a signalled worker has finished its chunk
# After a signalled worker finishes its chunk: time for the result to reach the parent before it exits.
_RESULT_GRACE_S = 2.0


def _init_worker(options: LintOptions, want_digest: bool, stop) -> None:
    global _OPTIONS, _WANT_DIGEST, _STOP
    _OPTIONS, _WANT_DIGEST, _STOP = options, want_digest, stop
    signal.signal(signal.SIGINT, _finish_this_file)
    signal.signal(signal.SIGTERM, _finish_this_file)
    tune_gc()


def _finish_this_file(signum, frame) -> None:
    """Finish the file being linted, then exit. An idle worker exits at once: a pool that broke
    (another worker was killed) terminates its workers and waits for them, and one left waiting
    for work would wait for ever."""
    global _SIGNALLED
    _SIGNALLED = True
    if not _LINTING:
        os._exit(128 + signum)
    threading.Thread(target=_exit_after_chunk, args=(signum,), daemon=True).start()


def _exit_after_chunk(signum: int) -> None:
    _CHUNK_DONE.wait()
    threading.Event().wait(_RESULT_GRACE_S)  # the result is sent after the chunk returns
    os._exit(128 + signum)


def _lint_chunk(chunk: Sequence[Tuple[int, str]]) -> List[Tuple[int, Outcome]]:
    global _LINTING
    out = []
    _LINTING = True
    try:
        for index, path in chunk:
            if _SIGNALLED or (_STOP is not None and _STOP.is_set()):
                break  # interrupted: the rest of the chunk is not linted, nor written
            try:
                out.append((index, _lint_one(path, _OPTIONS, _WANT_DIGEST)))
            except Exception as exc:  # noqa: BLE001 - lint_file should not raise; never lose the run
                out.append((index, (FileResult(path, internal_errors=[f"{path}: {type(exc).__name__}: {exc}"]),
                                    None, None)))
    finally:
        _LINTING = False
        if _SIGNALLED:
            _CHUNK_DONE.set()
    return out


# --- many files -------------------------------------------------------------------------------

def lint_files(paths: Sequence[str], options: LintOptions, jobs: int = 0, cache: Optional[Cache] = None,
               warn: Callable[[str], None] = lambda message: None) -> List[FileResult]:
    """Lint ``paths`` with ``jobs`` processes (0: one per core), using and filling ``cache``."""
    jobs = jobs or default_jobs()
    results: List[Optional[FileResult]] = [None] * len(paths)
    todo: List[int] = []
    sizes = {}
    for i, path in enumerate(paths):
        stat = file_stat(path)
        sizes[i] = stat[1] if stat else 0
        if cache is None or stat is None or path.endswith(".ipynb"):
            todo.append(i)
            continue
        hit = _from_cache(cache, path, stat, options)
        if hit is None:
            todo.append(i)
        else:
            results[i] = hit

    with interruptible():
        outcomes = _run(paths, todo, sizes, options, jobs, cache is not None, warn)
        try:
            for i, (result, file_digest, stat) in outcomes:
                results[i] = result
                if cache is not None and file_digest is not None and stat is not None:
                    dependencies = _digests(result.dependencies)
                    if dependencies is not None:
                        cache.store(os.path.abspath(paths[i]), stat, file_digest, file_codes(paths[i], options),
                                    options.ignore_noqa, result.diagnostics, options.reduced_matmul, options.src,
                                    dependencies)
        finally:
            outcomes.close()  # when interrupted: stop the workers now
    if cache is not None:
        cache.save()
    return [r for r in results if r is not None]


def _digests(paths: Sequence[str]) -> Optional[Dict[str, str]]:
    """The digest of each file the findings depend on; None if one cannot be read (not cached)."""
    found = {}
    for path in paths:
        found[path] = current_digest(path)
        if found[path] is None:
            return None
    return found


def _from_cache(cache: Cache, path: str, stat: Stat, options: LintOptions) -> Optional[FileResult]:
    abspath = os.path.abspath(path)
    file_digest = cache.known_digest(abspath, stat)
    data = None
    if file_digest is None:
        if abspath not in cache.index:
            return None  # never seen: no need to read it twice
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        if file_stat(path) != stat:
            return None
        file_digest = digest(data)
    hit = cache.lookup(path, file_digest, file_codes(path, options), options.ignore_noqa, options.reduced_matmul,
                       options.src)
    if hit is None:
        return None
    if options.fix and any(applicable(d.fix, options.unsafe_fixes) for d in hit.diagnostics):
        return None  # fixing needs the full check
    cache.remember_stat(abspath, stat, file_digest)
    result = FileResult(path, hit.diagnostics)
    if hit.diagnostics:
        try:
            if data is None:
                with open(path, "rb") as handle:
                    data = handle.read()
            result.source_map = SourceMap(SourceText.from_bytes(data).text)
        except (OSError, UndecodableSource):
            return None
    return result


def _run(paths: Sequence[str], todo: List[int], sizes, options: LintOptions, jobs: int, want_digest: bool,
         warn: Callable[[str], None]):
    total = sum(sizes[i] for i in todo)
    if jobs <= 1 or len(todo) < MIN_FILES_FOR_POOL or total < MIN_BYTES_FOR_POOL:
        for i in todo:
            yield i, _lint_one(paths[i], options, want_digest)
        return
    chunks = _chunks(sorted(todo, key=lambda i: -sizes[i]), sizes, jobs)
    try:
        context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else \
            multiprocessing.get_context()
        stop = context.Event()
        executor = ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), mp_context=context,
                                       initializer=_init_worker, initargs=(options, want_digest, stop))
    except (OSError, ValueError) as exc:
        warn(f"cannot start worker processes ({exc}); linting in one process")
        for i in todo:
            yield i, _lint_one(paths[i], options, want_digest)
        return
    retry: List[int] = []
    with _stopping(executor, stop):
        futures = {executor.submit(_lint_chunk, [(i, paths[i]) for i in chunk]): chunk for chunk in chunks}
        for future in as_completed(futures):
            try:
                done = future.result()
            except BrokenProcessPool:
                retry.extend(futures[future])  # a worker died: every unfinished chunk fails
                continue
            for item in done:
                yield item
    if retry:
        yield from _recover(paths, sorted(retry, key=lambda i: -sizes[i]), options, want_digest, jobs, context, stop)


@contextmanager
def _stopping(executor: ProcessPoolExecutor, stop):
    """Shut ``executor`` down after the block; if the block does not finish (an interrupt, or the
    consumer stopped), first tell the workers to stop after their current file, and start nothing more."""
    try:
        yield
    except BaseException:
        stop.set()
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        executor.shutdown(wait=True)


def _recover(paths: Sequence[str], todo: List[int], options: LintOptions, want_digest: bool, jobs: int, context,
             stop):
    """Lint again the files of a pool that broke because a worker died (killed for memory, a crash
    in native code): one file per task in a new pool, then, for what that pool did not finish,
    each file alone in its own process, so that only the file that kills its worker is lost."""
    alone: List[int] = []
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                                   initargs=(options, want_digest, stop))
    with _stopping(executor, stop):
        futures = {executor.submit(_lint_chunk, [(i, paths[i])]): i for i in todo}
        for future in as_completed(futures):
            try:
                yield from future.result()
            except BrokenProcessPool:
                alone.append(futures[future])
    for i in sorted(alone):
        executor = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_init_worker,
                                       initargs=(options, want_digest, stop))
        with _stopping(executor, stop):
            try:
                yield from executor.submit(_lint_chunk, [(i, paths[i])]).result()
            except BrokenProcessPool:
                yield i, (FileResult(paths[i], internal_errors=[f"{paths[i]}: a worker process died"]), None, None)


def _chunks(order: List[int], sizes, jobs: int) -> List[List[int]]:
    """Consecutive runs of ``order`` (largest files first), each about CHUNK_BYTES, but never so big
    that the first chunks hold more than a fair share of the work."""
    total = sum(sizes[i] for i in order)
    limit = max(1, min(CHUNK_BYTES, total // (jobs * 4) or 1))
    chunks: List[List[int]] = []
    current: List[int] = []
    weight = 0
    for i in order:
        current.append(i)
        weight += sizes[i]
        if weight >= limit or len(current) >= CHUNK_FILES:
            chunks.append(current)
            current, weight = [], 0
    if current:
        chunks.append(current)
    return chunks
