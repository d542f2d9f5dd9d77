"""An abstract interpreter that follows dtypes and roles through a module.

It runs every function and method over :class:`~poslint.analysis.lattice.Value` instead of
tensors: assignments, tuple unpacking, branches (merged), loops (run once, merged),
``self.<attr>`` across methods, buffers and parameters, calls to functions and methods of the
same module (with the caller's argument values, memoised), closures and module constants.
The module's structure and phases come from :mod:`~poslint.analysis.object_model`, what torch
operations do from :mod:`~poslint.analysis.torch_api`, and how roles change and which sinks
confirm them from :mod:`~poslint.analysis.roles`. What it sees is recorded in
:class:`~poslint.analysis.facts.ModuleFacts` for the rules.

It never imports or executes the code it reads.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
import operator
import re
import sys
import weakref
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from poslint.analysis.facts import (WILDCARD, AttrRead, Borrowed, Cast, Creation, Handoff, ModuleFacts, Product, Site,
                                    Store, Trig, family_matches, node_key)
from poslint.analysis.library_summaries import LIBRARY, LOADED_ROTARY_BUFFERS, TRANSFORMERS_LOADERS, LibrarySummary
from poslint.analysis.lattice import (
    BF16_EXACT_UP_TO,
    FP16_EXACT_UP_TO,
    ONE_VALUE_KEYS,
    FROZEN_PARAMETER,
    IMAGINARY_MULTIPLE,
    LAYER_OUTPUT,
    MODULE_CONSTANT,
    PHASE,
    SCALED_BY_INPUT,
    UNIFORM_DRAW,
    ONE_VALUE_FILL,
    WIDE_RANDOM_DRAW,
    RANDOM_DRAW,
    UNKNOWN,
    UNKNOWN_TENSOR,
    Origin,
    Prec,
    Role,
    Sort,
    Either,
    Value,
    dtype_value,
    merge,
    tensor,
    value_range,
)
from poslint.analysis.names import NOT_FIRST_PARTY, is_test_module
from poslint.analysis.object_model import (ClassInfo, FunctionInfo, ModuleModel, annotation_parts, bound_arguments,
                                           ALL_ATTRS, is_autocast_off_call, is_classmethod, is_plain_object, is_property, is_self_attr, is_static, literal_defaults,
                                           held_names, lookup_instances, parameter_attrs, built_from_parameters, parameter_kinds, registration_parts,
                                           is_none, tail_name, HOST_BUILT, annotated_float, float_fields,
                                           resolving_foreign_bases)
from poslint.analysis import series as series_ops
from poslint.analysis.subtrees import walk
from poslint.analysis.roles import (NUMBER_LIKE, Sinks, candidate_trace, combined_roles, held_by_module, is_grid,
                                    is_pow2_base, module_state, negated, operand_identity, power_role, sign_of,
                                    spacing_of_one_table, unknown_operand, TABLE_ROLES)
from poslint.analysis.torch_api import (TORCH_MODULE_BASES, MODULE_RETURNING_SELF, IN_PLACE_ELEMENTWISE, BOUND_BREAKING, CUDA_AUTOCAST_LOWERED, DEFAULT_DTYPE_SETTERS, LINEAR_MODULES, LAYER_PARAMETERS, NUMPY_FLOAT_PRECS, ONE_DTYPE_PRODUCTS, VALUE_PRESERVING_MODULES, LOAD_DTYPE_ATTRIBUTES, CAST_METHODS, COMPLEX_DTYPES, CONCAT, CONSTRUCTION_ROOTS, CREATION_DEFAULT,
                                        DEVICE_MOVES, DTYPES, PYTHON_TYPE_DTYPES, FACTORIES, FLOAT16_NAMES, INDEXING_CALLS, KIND_TESTS, LIKE, MATRIX_PRODUCTS,
                                        MODULE_DICTS, MODULE_LISTS, MODULE_LOOKUPS, PARAMETER_CONTAINERS, MODULE_REGISTRATIONS, MODULE_TENSOR_DICTS, NEW_TENSOR_METHODS, OTHER_DEVICE_AVAILABILITY, OTHER_DEVICE_TYPES, PRESERVING, SEQUENTIAL_CONTAINERS,
                                        PRODUCT_KEYWORDS,
                                        INIT_RANDOM_FILLS, INVERSE_TRIG, PREDICATES, PYTHON_FLOATS, RANDOM_CREATION, RANDOM_FILLS,
                                        ROLE_KILLING, UNIFORM_INIT_FILLS,
                                        COMPLEX_INPUT_CALLS, SAME_DTYPE_PRODUCTS, SIZE_ARGUMENTS,
                                        TENSOR_TYPES, TOTAL_KEEPING, TOTALS, FULL_REDUCTIONS, TRANSFORMING, TRIG, VALUE_KEEPING,
                                        MAGNITUDE_KEEPING)

# Values that carry one of these hold no positions, whatever they are multiplied by later.
NOT_POSITIONAL = frozenset({RANDOM_DRAW, PHASE})
# In the call memo, next to a call's result: what it stored on ``self``, under (STORES_ON_SELF, key).
STORES_ON_SELF = "stores-on-self"
# What a tensor is asked for, not computed with: ``x.device``, ``x.size(1)``, ``y.to(x.dtype)``.
# ``with torch.device("cuda"):`` makes factories given no device put their tensors there.
_DEVICE_CONTEXT = re.compile(r"with\s+torch\.device\(")
METADATA_ATTRIBUTES = frozenset({"device", "dtype", "shape", "ndim", "is_cuda", "layout"})
METADATA_CALLS = frozenset({"size", "dim", "numel", "to", "type", "type_as", "cuda", "cpu"})
# The payload key of a tensor filled with one exact value other than one (zeros, ``full(shape, 6)``).
ONE_VALUE = ONE_VALUE_KEYS[1]
ZEROS = ONE_VALUE_KEYS[2]

# Deep enough for helpers that call helpers; recursion is cut by the call stack, cost by the memo.
MAX_CALL_DEPTH = 24
# Past this magnitude an exp's bound is no range worth keeping.
MAX_EXP_MAGNITUDE = 30.0
# Results of calls into an imported module kept for every file that makes the same call.
MAX_SUMMARIES = 4096


# --------------------------------------------------------------------------------------------
# Module structure


FLOAT32_DEFAULT = dtype_value(Prec.F32, None)
DEVICE = Value(sort=Sort.OTHER, payload_key="device")  # t.device: a .to() of it moves, never converts
# The payload key of what an ``nn.ParameterList``/``nn.ParameterDict`` holds.
PARAMETERS_HELD = "parameters held"


# --------------------------------------------------------------------------------------------
# Interpreter state


# The key in a call's keyword arguments that stands for a ``**mapping`` unpacked into it.
UNPACKED_KEYWORDS = "**"


@dataclass
class Frame:
    function: Optional[FunctionInfo]
    env: Dict[str, Value]
    runtime: bool
    autocast_off: bool
    default: Value  # dtype value that "the default dtype" currently means
    returns: List[Value] = field(default_factory=list)
    # At each ``return``: what the frame had stored in ``self.<attr>`` (see Interpreter.call).
    exits: List[Dict[str, Value]] = field(default_factory=list)
    # The ``self.<attr>`` that methods it called stored (a store of its own on one branch only
    # stays after the branch, as before: the module holds it on later calls).
    stored_by_calls: Set[str] = field(default_factory=set)
    # The ``self.<attr>`` it stored on some paths only, not passed on to its caller.
    stored_on_some_paths: Set[str] = field(default_factory=set)
    # Of those, the ones whose other paths are taken at any length: stored under a test that is no
    # bound (``if "dynamic" in self.rope_type:``). A store past a length (``if n > self.trained:``)
    # is what a lazy rebuild always runs from forward, whose own test already lies past that length.
    stored_on_flagged_paths: Set[str] = field(default_factory=set)
    loop_depth: int = 0
    # Called (directly or not) from construction-only code, though the function itself may also run
    # later (a ``tmp_store(name, value)`` helper that ``__init__`` and ``forward`` both call).
    at_construction: bool = False
    # The class ``self`` is an instance of, when a subclass runs an inherited method (its
    # overrides are what ``self.method()`` calls there).
    dispatch: Optional[ClassInfo] = None
    # Parameters a run on its own bound to their defaults: a caller may pass any other value, so
    # a default stands for the range of the code, not for one exact value (``guidance=4.0``).
    defaulted: FrozenSet[str] = frozenset()

    def site(self) -> Site:
        return Site(self.function.qual if self.function else None, self.runtime and not self.at_construction,
                    self.autocast_off, self.function.phase_known if self.function else True)

    @property
    def cls(self) -> Optional[ClassInfo]:
        return self.function.cls if self.function else None


class _Return(Exception):
    pass


@dataclass(frozen=True, eq=False)
class ConfigDefaults:
    """The literal defaults of the class a parameter is annotated with (attribute -> number), and
    its fields annotated as floats whose default is None (a configuration file sets them)."""

    values: Dict[str, object]
    floats: FrozenSet[str] = frozenset()


@dataclass(frozen=True, eq=False)
class _ReturnsModule:
    """``module.to(...)``, ``module.half()``...: nn.Module's methods that return the module itself."""

    module: Value


@dataclass(frozen=True, eq=False)
class _MethodOf:
    """``owner.name`` before we know whether it is called."""

    owner: Value
    name: str


@dataclass(frozen=True)
class _LinearModule:
    """``nn.Linear(in_features, ...)``: called, ``x @ weight.T`` with a parameter drawn at random,
    which ``module.to()`` converts with the module that holds it."""

    in_features: Optional[int]
    # A weight the module assigned over the random one (``self.proj.weight = nn.Parameter(table)``)
    weight: Optional[Value] = None


@dataclass(frozen=True)
class _LoadedModel:
    """A model transformers' loader returned here, or a part of one reached by attributes and
    indexing: its rotary frequency buffers are float32 (library_summaries.TRANSFORMERS_LOADERS)
    until a conversion here (``model.half()``, ``model.to(torch.bfloat16)``), ``converted``."""

    converted: Optional[str] = None


def _loaded_conversion(method: str, args: Sequence[Value], source: str, before: Optional[str]) -> Optional[str]:
    """What a module method leaves of a loaded model's rotary buffers: the call that made them
    16-bit (``source``), None for float32 again, or ``before`` (a move, ``eval()``)."""
    if method in ("half", "bfloat16"):
        return source
    if method in ("float", "double"):
        return None
    dtype = next((a for a in args if a.sort is Sort.DTYPE and not a.is_complex), None)
    if method in ("to", "type") and dtype is not None and dtype.prec is not Prec.UNKNOWN:
        return None if dtype.prec.is_float32_or_better else source
    return before


def _loaded_model(converted: Optional[str] = None) -> Value:
    # (no payload key: otherwise as opaque as any value the code does not type)
    return Value(sort=Sort.OTHER, payload=_LoadedModel(converted))


@dataclass(frozen=True)
class _TorchLayer:
    """A torch layer of ``LAYER_PARAMETERS`` other than ``nn.Linear`` (``nn.Embedding(n, d)``):
    its parameters are read by name; calling it is not modelled."""

    qual: str


# The payload key of a torch layer's parameter read by name (``self.proj.weight``).
LAYER_PARAMETER = "layer parameter"


def _layer_parameters(payload: object) -> Tuple[str, ...]:
    """The names under which a torch layer built here holds its parameters."""
    if isinstance(payload, _LinearModule):
        return LAYER_PARAMETERS["torch.nn.Linear"]
    return LAYER_PARAMETERS[payload.qual] if isinstance(payload, _TorchLayer) else ()


# ``nn.Dropout(p)``, ``nn.Identity()``: called, the input comes back.
VALUE_PRESERVING = Value(sort=Sort.CALLABLE, payload_key="value-preserving module")


def _linear_module(in_features: Optional[int], weight: Optional[Value] = None, where: object = None) -> Value:
    return Value(sort=Sort.CALLABLE, payload=_LinearModule(in_features, weight),
                 payload_key=("linear-module", in_features, where))


# A Linear of this many inputs at most projects coordinates (a time, x and y, x y z): into cos and sin,
# learned Fourier features. A wider one maps activations (an ISTFT head predicting phases for polar).
MOST_COORDINATES = 3


@dataclass(frozen=True)
class _TimestepEmbedder:
    """A library module that embeds the timesteps it is called on (library_summaries): its first
    argument, or every argument but the last, or (a whole diffusion model) the arguments passed
    by these ``keywords``."""

    all_but_last: bool
    keywords: Tuple[str, ...] = ()
    position: Optional[int] = None  # where a whole model takes the time positionally


@dataclass(frozen=True)
class _LibraryRotary:
    """A library's rotary module (library_summaries' ``rotary-module``), or one of its rotating
    methods (``method``) of the module named ``owner`` in the source, held in a name before it is called."""

    method: Optional[str] = None
    owner: Optional[str] = None


@dataclass(frozen=True)
class _TransformersRotary:
    """An instance of one of transformers' rotary modules (library_summaries' ``hf-rotary``), by
    the class's qualified name."""

    qual: str


@dataclass(frozen=True)
class _FlashRotary:
    """flash-attention's rotary module (library_summaries' ``flash-rotary``) built with
    ``pos_idx_in_fp32=False``: ``flag`` is that argument's node."""

    flag: ast.AST


# The methods of a ``rotary-module`` that rotate their first argument by positions made in its dtype.
LIBRARY_ROTATING_METHODS = frozenset({"rotate_queries_or_keys", "rotate_queries_and_keys",
                                      "rotate_queries_with_cached_keys"})


@dataclass(frozen=True)
class _LibrarySeqPos:
    """A library rotary module's ``get_seq_pos``, read by a subclass."""


@dataclass(frozen=True)
class _LibraryHelper:
    """A third-party helper of poslint.analysis.library_summaries, held in a name before it is called."""

    qual: str


@dataclass(frozen=True, eq=False)
class _Partial:
    """``functools.partial(fn, *args, **kwargs)``: called, ``fn`` with these arguments first."""

    callee: Value
    args: Tuple[Value, ...]
    kwargs: Tuple[Tuple[str, Value], ...]


def _rejected_by_partial(bound: "_Partial", positional: int) -> bool:
    """Whether Python rejects a call of ``partial(fn, ..., name=v)`` whose positional arguments
    reach ``name`` too (``TypeError: multiple values for argument``): the call runs nothing."""
    fn = bound.callee.payload
    if not isinstance(fn, FunctionInfo):
        return False
    spec = fn.node.args
    names = [a.arg for a in (*spec.posonlyargs, *spec.args)]
    given = dict(bound.kwargs)
    return any(name in given for name in names[:len(bound.args) + positional])


def _partial(callee: Value, args: Sequence[Value], kwargs: Dict[str, Value]) -> Value:
    bound = tuple(sorted(kwargs.items(), key=lambda item: item[0]))
    return Value(sort=Sort.CALLABLE, payload=_Partial(callee, tuple(args), bound),
                 payload_key=("partial", callee.payload_key, tuple(args), bound))


@dataclass(frozen=True, eq=False)
class _ModulesByName:
    """``{"embed": Sinusoid(d), ...}``, the modules of an ``nn.ModuleDict`` by their literal names."""

    members: Dict[str, Value]


def _modules_by_name(members: Dict[str, Value]) -> Value:
    return Value(sort=Sort.OTHER, payload=_ModulesByName(members),
                 payload_key=("modules by name",) + tuple((k, v.payload_key) for k, v in members.items()))


@dataclass(frozen=True, eq=False)
class _Keywords:
    """What a call passed into a function's ``**kwargs`` beyond its named parameters, by keyword:
    forwarded with ``**kwargs`` (a wrapper's ``self.fn(x, **kwargs)``), they reach the callee's own."""

    members: Dict[str, Value]


def _keywords(members: Dict[str, Value]) -> Value:
    return Value(sort=Sort.OTHER, payload=_Keywords(members),
                 payload_key=("keywords",) + tuple(sorted(members.items(), key=lambda item: item[0])))


# The payload key of an ``nn.ModuleList`` of modules known one by one (its payload, a tuple).
MODULE_LIST_KEY = "module list"


def _module_list(members: Tuple[Value, ...]) -> Value:
    return Value(sort=Sort.TUPLE, payload=members, payload_key=MODULE_LIST_KEY)


def _extends(new: Value, old: Value) -> bool:
    """Whether module container ``new`` holds what ``old`` did and more (``append``, a new name)."""
    if new.payload_key == MODULE_LIST_KEY and old.payload_key == MODULE_LIST_KEY:
        return new.payload[:len(old.payload)] == old.payload
    if isinstance(new.payload, _ModulesByName) and isinstance(old.payload, _ModulesByName):
        return all(new.payload.members.get(k) == v for k, v in old.payload.members.items())
    return False


@dataclass(frozen=True, eq=False)
class _Chain:
    """``nn.Sequential(a, b, ...)``: called, each module takes what the one before it returned."""

    modules: Tuple[Value, ...]


class Interpreter:
    def __init__(self, facts: ModuleFacts, class_names: Set[str], project=None, follows_imports: bool = False,
                 path: str = ""):
        """``project`` (a :class:`~poslint.analysis.project.Project`) knows the other modules of
        the project; with ``follows_imports`` this module's own analysis uses them (the linted
        file does, an imported module analysed on its own does not). ``path`` names the file."""
        self.facts = facts
        self.project = project
        self.follows_imports = follows_imports and project is not None
        self.path = path
        # While this module runs a call made by another (the host): (host interpreter, host call node).
        self.anchor: Optional[Tuple["Interpreter", ast.AST]] = None
        self._call_site: Optional[ast.AST] = None  # the call being made, for calls into other modules
        self._borrowed: Dict[tuple, Borrowed] = {}  # as host: facts other modules recorded for its calls
        # as host: each other module's call memo, for calls made directly or through another module, per round
        self._borrowed_memos: Dict[Tuple[int, bool], dict] = {}
        # as host: the calls into other modules its first round made (by module, anchor and context)
        self._borrowed_in_first_round: Set[tuple] = set()
        # As an imported module: results of calls that depend on their arguments alone (see call_for).
        self.summaries: Dict[tuple, Value] = {}
        self.ran = False
        self.class_names = class_names  # every class defined in the file, at any depth
        self._guards: Dict[int, Optional[Tuple[bool, List[ast.AST]]]] = {}
        self.names = facts.names
        self.model: Optional[ModuleModel] = None
        self.functions: Dict[str, FunctionInfo] = {}
        self.classes: Dict[str, ClassInfo] = {}
        self.globals: Dict[str, Value] = {}
        self.memo: Dict[tuple, object] = {}  # call key -> result; (STORES_ON_SELF, key) -> its stores on self
        self.stack: List[FunctionInfo] = []
        self.recording = False
        self.analyzed: Set[int] = set()
        self.analyzed_nodes: Set[int] = set()  # the definitions some call of them ran
        # Nested functions as their definers ran, with a frame standing for where they were defined.
        self.nested_defined: List[Tuple[FunctionInfo, Frame]] = []
        self.analyzed_after_construction: Set[int] = set()  # called in forward, or on their own
        self._seen_facts: Set[tuple] = set()
        self._integer_names: Dict[int, Set[str]] = {}
        self._complex_names: Dict[int, Set[str]] = {}
        self._state_aliases: Dict[int, Set[str]] = {}
        self._kinds_by_function: Dict[int, Dict[str, Set[str]]] = {}
        self.sinks = Sinks()  # where products end up, kept across rounds
        self._kept_looked_up: Set[int] = set()  # classes whose keep-in-float32 lists elsewhere are known
        self.cast_candidates: Set[tuple] = set()  # casts of values of unknown role
        self.guessed: Set[tuple] = set()  # products whose frequencies were guessed from a cos/sin sink
        # Grids from -b to b (``arange(l, -l - 1, -1)``): harmonic orders, or relative positions
        self.symmetric_grids: Set[tuple] = set()
        # A grid's end bound where it is no literal (``arange(0.5, n)``: n, as written), so that the
        # grid over that bound is known to lie within [-1, 1] (a patch centre's normalised coordinate)
        self.grid_ends: Dict[tuple, str] = {}
        # Products of frequencies and an operand of no role, and of frequencies and positions.
        self.positions_guessed: Set[tuple] = set()
        self.positions_confirmed: Set[tuple] = set()
        # (class, attr) of buffers and parameters that construction registers empty / with a tensor
        self.empty_at_construction: Set[Tuple[str, str]] = set()
        self.built_at_construction: Set[Tuple[str, str]] = set()
        # Attribute values observed in the current round, per class.
        self._next_attrs: Dict[str, Dict[str, Tuple[str, Value]]] = {}
        self.stores_for_host = 0  # stores on this module's instances made by calls into other modules
        self.through_other = False  # running a call the linted file makes through another module

    # ---- driver ------------------------------------------------------------------------

    def prepare(self) -> None:
        """Build the module's model and globals: all that a call into its functions needs.
        :meth:`run` analyses every function; an imported module is run when a file first uses
        one of its definitions (see :meth:`learn`)."""
        if self.model is not None:
            return
        tree = self.facts.tree
        if self.follows_imports:
            self.project.begin(self.module_name, self)
        if self.project is not None and self.module_name is not None:
            module = self.module_name
            self.names.take_star_imports(lambda starred: self.project.star_import_aliases(starred, {module}))
        self.model = ModuleModel(tree, self.names, self.class_names,
                                 resolve_class=self._imported_class if self.follows_imports else None,
                                 phases_elsewhere=self._phases_elsewhere if self.follows_imports else None)
        self.functions, self.classes = self.model.functions, self.model.classes
        for fn in self.model.all_functions():
            fn.home_ref = weakref.ref(self)
        for cls in self.classes.values():
            cls.home_ref = weakref.ref(self)
        # A call, not a mention: a comment or a method named ``set_default_namespace`` sets nothing.
        self.sets_default_dtype = "set_default_" in self.facts.text and any(
            isinstance(node, ast.Call) and tail_name(node.func) in DEFAULT_DTYPE_SETTERS for node in walk(tree))
        # pytest runs a test module's code with the float32 default: no loader builds its models.
        where = PurePath(self.path)
        self.is_test = is_test_module(self.module_name or (".".join(where.with_suffix("").parts) if where.name else ""))
        # Factories given no device make CPU tensors, unless the module moves the default device.
        self.factories_on_cpu = "set_default_device" not in self.facts.text and \
            _DEVICE_CONTEXT.search(self.facts.text) is None
        self._module_level(tree)

    def learn(self) -> ModuleFacts:
        """Run this module's own analysis once (not while it runs a call for another module:
        it learnt before that call began); its facts."""
        if not self.ran and self.anchor is None:
            with resolving_foreign_bases(None):  # what its text alone says
                self.run()
        return self.facts

    def run(self) -> None:
        self.prepare()
        self.ran = True
        tree = self.facts.tree
        entries = self.model.entry_points()
        inherited = self._inherited_construction()
        self._borrowed_in_first_round = set()
        # Round 1 learns what each attribute holds; round 2 records facts with that knowledge.
        for recording in (False, True):
            self.recording = recording
            self.memo.clear()
            self._borrowed_memos.clear()
            for cls in self.classes.values():
                cls.attrs = self._next_attrs.get(cls.name, {}) if recording else {}
            self._next_attrs = {}
            self._module_level(tree)
            self.analyzed: Set[int] = set()
            self.analyzed_nodes: Set[int] = set()
            self.nested_defined: List[Tuple[FunctionInfo, Frame]] = []
            self.analyzed_after_construction: Set[int] = set()
            for fn in entries:
                self.call(fn, [], {}, None, None, standalone=True)
            for cls, root in inherited:
                # A base's constructor calls hooks that this subclass overrides, or is imported:
                # what it causes in another module shows at the subclass's definition.
                self._call_site = cls.node
                self.call(root, [], {}, Value(sort=Sort.INSTANCE, payload=cls, payload_key=cls.name), None,
                          standalone=True)
            for cls, method in self._methods_reading_subclass_state():
                # A base's forward over the tables only its subclasses build: run for each of them.
                self._call_site = cls.node
                self.call(method, [], {}, Value(sort=Sort.INSTANCE, payload=cls, payload_key=cls.name), None,
                          standalone=True)
            # Functions reached only from code the interpreter does not run (a class nested in a
            # function, a decorator's wrapper) are analysed on their own.
            for fn in self.model.all_functions():
                if id(fn) not in self.analyzed:
                    self.call(fn, [], {}, None, None, standalone=True)
            # Nested functions that their definer returns or hands on without calling them (a
            # factory's builder that another module installs as a method): on their own too.
            done = 0
            while done < len(self.nested_defined):
                inner, where = self.nested_defined[done]
                done += 1
                if id(inner.node) not in self.analyzed_nodes:
                    self.call(inner, [], {}, None, where, standalone=True)
            # A method that also runs after construction, reached so far only from construction
            # (an override that an imported base's forward calls), whose stores there model.to()
            # converts before forward: analysed on its own as forward code.
            for fn in self.model.all_functions():
                if fn.runtime and id(fn) not in self.analyzed_after_construction:
                    self.call(fn, [], {}, None, None, standalone=True)
        self.facts.class_mro = {name: tuple(c.name for c in cls.mro()) for name, cls in self.classes.items()}
        self.facts.rotations = self.sinks.cos & self.sinks.sin
        self.facts.filled_in_forward = {(cls.name, attr) for cls in self.classes.values()
                                        for _, attr in self.empty_at_construction if self.filled_in_forward(cls, attr)}
        self.facts.built_at_construction = self.built_at_construction
        for borrowed in self._borrowed.values():
            borrowed.facts.rotations = self.facts.rotations
        self.facts.reached = list(self._borrowed.values())
        self.facts.borrowed = [b for b in self._borrowed.values() if b.facts.products or b.facts.casts
                               or b.facts.stores or b.facts.creations or b.facts.trigs or b.facts.attr_reads]
        if self.follows_imports:
            self.facts.dependencies = set(self.project.consulted)
        else:  # an imported module, kept for the files that call into it: what only its own run needed
            self.memo, self._seen_facts, self.analyzed = {}, set(), set()
            self.analyzed_nodes, self.nested_defined = set(), []

    @property
    def module_name(self) -> Optional[str]:
        return self.facts.module

    # ---- other modules of the project ------------------------------------------------------

    def _phases_elsewhere(self, fn: FunctionInfo, producers: Sequence[str] = (),
                          reached: Sequence[FunctionInfo] = ()) -> Optional[Set[bool]]:
        """The phases in which the other modules of this module's package call its function ``fn``
        (which calls the module's functions ``reached``); for a method, on the instances they hold,
        built by ``producers`` (its class, factories)."""
        if not self.module_name:
            return None
        if fn.cls is not None:
            return self.project.method_phases_elsewhere(self.module_name, list(producers), fn.name,
                                                        self.facts.source(fn.node))
        # (its phase is also that of the module's functions it calls: their text counts too)
        text = "\n".join(self.facts.source(f.node) for f in (fn, *reached))
        return self.project.phases_elsewhere(self.module_name, fn.name, text)

    def _imported(self, qual: str) -> Optional[object]:
        """What an imported dotted name is in the project (see Project.definition), if followed."""
        if not self.follows_imports:
            return None
        return self.project.definition(qual)

    def _project_class(self, qual: str) -> Optional[ClassInfo]:
        """The class of the project named ``qual``: of this module, or one it can import."""
        module, _, name = qual.rpartition(".")
        if module == self.module_name and name in self.classes:
            return self.classes[name]
        found = self._imported(qual)
        return found if isinstance(found, ClassInfo) else None

    def _project_class_of(self, node: ast.AST) -> Optional[ClassInfo]:
        """The class of the project that the name or dotted name ``node`` is here."""
        if isinstance(node, ast.Name) and node.id in self.classes:
            return self.classes[node.id]
        return self._imported_class(node) if isinstance(node, (ast.Name, ast.Attribute)) else None

    def _imported_class(self, base: ast.AST) -> Optional[ClassInfo]:
        qual = self.names.qualname(base)
        found = self._imported(qual) if qual else None
        return found if isinstance(found, ClassInfo) else None

    def _calls_what_it_was_handed(self) -> bool:
        """Whether the call this module makes now calls an argument of its running function, or a
        method of one (``decoder(points)``), that no annotation names a class of: its own analysis
        cannot tell what that runs, so it cannot show what the call does when it is linted."""
        site, running = self._call_site, self.stack[-1] if self.stack else None
        if not isinstance(site, ast.Call) or running is None:
            return False
        target = site.func.value if isinstance(site.func, ast.Attribute) else site.func
        spec = running.node.args
        params = [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]
        if running.cls is not None and not is_static(running.node):
            params = params[1:]  # (``self.merger(x)``: the instance's own module, no argument's)
        param = next((p for p in params if isinstance(target, ast.Name) and p.arg == target.id), None)
        return param is not None and self._annotated_class(param.annotation) is None

    def call_for(self, requester: "Interpreter", fn: FunctionInfo, args: Sequence[Value], kwargs: Dict[str, Value],
                 self_value: Optional[Value], caller: Optional[Frame]) -> Value:
        """Run ``fn`` of this module for a call that ``requester`` (another module) makes. What it
        records goes to the host's borrowed facts of this module, for the host's anchoring call."""
        host, anchor = requester.anchor or (requester, requester._call_site)
        if host is self:  # back into the linted file itself
            return self.call(fn, args, kwargs, self_value, caller)
        # A call another module makes records only what holds the linted file's own code (that
        # module shows the rest when it is linted), unless it calls what it was handed.
        through_other = requester is not host and not requester._calls_what_it_was_handed()
        if anchor is None:
            return UNKNOWN  # not reached through a call the host shows
        # What its classes hold, learnt before this call borrows the interpreter: the same
        # whichever file asks first, so that results do not depend on the order files are linted.
        self.learn()
        context = (id(fn), tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])),
                   bool(caller and caller.autocast_off), caller.default if caller else None,
                   bool(caller and caller.runtime),
                   self_value.payload_key if self_value is not None and self_value.sort is Sort.INSTANCE else None,
                   through_other)  # a call through another module records less (see _record)
        reusable = all(self._host_free(v) for v in (*args, *kwargs.values()))
        if reusable and context in self.summaries:
            return host.rebased(self.summaries[context], anchor, self.path)
        key = (id(self), id(anchor))
        borrowed = host._borrowed.get(key)
        if borrowed is None:
            facts = ModuleFacts(tree=self.facts.tree, text=self.facts.text, index=self.facts.index, names=self.names)
            facts.rotary_products, facts.escaped = host.facts.rotary_products, host.facts.escaped
            facts.largest_angles = host.facts.largest_angles
            facts.literal_scalings, facts.trig_scales = host.facts.literal_scalings, host.facts.trig_scales
            facts.linted_ref = weakref.ref(host.facts)
            facts.class_mro = {name: tuple(c.name for c in cls.mro()) for name, cls in self.classes.items()}
            facts.built_at_construction = self.built_at_construction
            borrowed = host._borrowed[key] = Borrowed(self.path, facts, self.learn, anchor)
        before = host._observed(borrowed.facts)
        saved = (self.facts, self._seen_facts, self.recording, self.memo, self.sinks, self._next_attrs,
                 self.cast_candidates, self.anchor, self.follows_imports, self.through_other)
        self.facts, self._seen_facts = borrowed.facts, borrowed.seen
        self.sinks, self._next_attrs, self.cast_candidates = host.sinks, {}, host.cast_candidates
        self.anchor, self.follows_imports, self.through_other = (host, anchor), True, through_other
        memo = host._borrowed_memos.setdefault((id(self), through_other), {})
        made = (id(self), id(anchor), context)
        # A call the host's first round did not make (through an attribute that round learns) is
        # rehearsed unrecorded first, as a round: its products learn where their results go (a
        # second call of a helper must not be the first to know that the first one's reach sin).
        rounds = (False, True) if host.recording and made not in host._borrowed_in_first_round else (host.recording,)
        if not host.recording:
            host._borrowed_in_first_round.add(made)
        try:
            for recording in rounds:
                self.recording, self.memo = recording, memo if recording == host.recording else {}
                result = self.call(fn, args, kwargs, self_value, caller)
        finally:
            (self.facts, self._seen_facts, self.recording, self.memo, self.sinks, self._next_attrs,
             self.cast_candidates, self.anchor, self.follows_imports, self.through_other) = saved
        if reusable and host.recording and host._observed(borrowed.facts) == before and self._host_free(result):
            # It saw nothing of the caller's and left no trace: any file's same call gives this.
            if len(self.summaries) >= MAX_SUMMARIES:
                self.summaries.clear()
            self.summaries[context] = result
        return host.rebased(result, anchor, self.path)

    def _observed(self, borrowed: ModuleFacts) -> tuple:
        """How much this host (and ``borrowed``) has recorded: a call that changes none of it left no trace."""
        return (self.stores_for_host, len(borrowed.products), len(borrowed.casts), len(borrowed.stores),
                len(borrowed.creations),
                len(borrowed.trigs), len(borrowed.attr_reads), len(self.facts.escaped),
                len(self.facts.rotary_products), len(self.cast_candidates), len(self.sinks.trig),
                len(self.sinks.cos), len(self.sinks.sin), len(self.sinks.attention))

    def _host_free(self, value: Value) -> bool:
        """Whether ``value`` holds nothing of a particular caller: no node, product or definition
        of another module (so that a call on it means the same whoever makes it)."""
        if value.products or value.recent:
            return False
        for origin in (value.origin, value.rounded):
            if origin is not None and not self.facts.holds(origin.node):
                return False
        payload = value.payload
        if isinstance(payload, tuple):
            return all(self._host_free(v) if isinstance(v, Value) else getattr(v, "home", self) is self
                       for v in payload)
        return getattr(payload, "home", self) is self and not isinstance(payload, _MethodOf)

    def rebased(self, value: Value, anchor: ast.AST, path: str) -> Value:
        """``value`` as this module sees it: where another module decided its precision, the
        call here that brought it (the reason names the other file and line)."""
        def moved(origin: Optional[Origin]) -> Optional[Origin]:
            if origin is None or self.facts.holds(origin.node):
                return origin
            line = getattr(origin.node, "lineno", "?")
            return Origin.at(anchor, f"{origin.reason} ({path}:{line})", origin.prec, origin.relative,
                             origin.exact, origin.float16, origin.cast)

        if value.sort is Sort.TUPLE and isinstance(value.payload, tuple):
            value = value.with_(payload=tuple(self.rebased(v, anchor, path) for v in value.payload))
        if value.origin is None and value.rounded is None:
            return value
        return value.with_(origin=moved(value.origin), rounded=moved(value.rounded))

    def _module_level(self, tree: ast.Module) -> None:
        frame = Frame(None, {}, runtime=False, autocast_off=False, default=self._default_dtype())
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Import, ast.ImportFrom)):
                continue
            try:
                self.exec_stmt(stmt, frame)
            except _Return:
                break
        # A table the module fixes (``BINS = np.linspace(0, 2 * np.pi, 25)``): what it computes
        # from it does not grow with any input.
        self.globals = {name: value.with_(products=value.products | {MODULE_CONSTANT})
                        if value.sort is Sort.OTHER and value.payload is None and not value.roles else value
                        for name, value in frame.env.items()}

    def _default_dtype(self, fn: Optional[FunctionInfo] = None) -> Value:
        """What "the default dtype" means where ``fn`` starts (module level for None).

        Loaders set a 16-bit default only while they construct the model, so it is a hazard in
        construction code and in code of unknown phase (a free function nothing here calls).
        Imports and the forward path run with float32, unless this file sets a default itself.
        """
        known_after_construction = fn is None or self.is_test or (fn.runtime and (fn.cls is not None or fn.callers))
        if known_after_construction and not self.sets_default_dtype:
            return FLOAT32_DEFAULT
        return dtype_value(Prec.DEFAULT, None)

    # ---- calls -------------------------------------------------------------------------

    def call(self, fn: FunctionInfo, args: Sequence[Value], kwargs: Dict[str, Value],
             self_value: Optional[Value], caller: Optional[Frame], standalone: bool = False,
             handed: Optional[Dict[str, Value]] = None) -> Value:
        """``fn`` called with these arguments; ``handed``: what the caller stored in the attributes
        of the part it calls (``self.rotary.inv_freq = t`` before ``self.rotary(n)``)."""
        if fn.home is not None and fn.home is not self:
            return fn.home.call_for(self, fn, args, kwargs, self_value, caller)
        if fn in self.stack or len(self.stack) >= MAX_CALL_DEPTH or _refuses_keywords(fn, kwargs):
            return UNKNOWN
        node = fn.node
        autocast_off = fn.autocast_off or bool(caller and caller.autocast_off)
        # A method that runs after construction, called from code that does too (a script's
        # ``model.sample()``), has its own default: the caller's is unknown only for its phase.
        default = self._default_dtype(fn) if caller is None or (
            caller.runtime and fn.runtime and fn.cls is not None) else caller.default
        dispatch = _subclass_instance(fn, self_value)
        # A method called on the caller's own ``self`` sees what the caller stored there so far
        # (a buffer registered again in float32 by a helper just before), and the caller sees
        # what the method stored on every path through it.
        # A function nothing in its own module calls runs in the phase of its caller elsewhere.
        runtime = caller.runtime if self.anchor and caller and fn.cls is None and not fn.callers else fn.runtime
        on_self = caller is not None and self_value is not None and caller.env.get("self") is self_value
        if runtime and (caller is None or caller.runtime):
            self.analyzed_after_construction.add(id(fn))
        incoming = _stored_on_self(caller.env) if on_self else (handed or {})
        at_construction = caller is not None and (not caller.runtime or caller.at_construction)
        key = (id(fn), tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])),
               autocast_off, default, standalone, at_construction, dispatch.name if dispatch else None,
               tuple(sorted(incoming.items(), key=lambda kv: kv[0])),
               self_value.payload_key if self_value is not None and self_value.sort is Sort.INSTANCE else None)
        if key in self.memo:
            if on_self:
                stored = self.memo.get((STORES_ON_SELF, key), {})  # kept, cleared and swapped with the memo
                caller.env.update(stored)
                caller.stored_by_calls.update(stored)
            return self.memo[key]
        self.memo[key] = UNKNOWN  # recursion through memo
        self.analyzed.add(id(fn))
        self.analyzed_nodes.add(id(node))
        env: Dict[str, Value] = dict(fn.closure or {})
        defaulted = self._bind_params(fn, node.args, args, kwargs, env, standalone, dispatch, self_value)
        env.update(incoming)
        # A free function's flag that this call leaves unsettled (``build_bias(n, full=not causal)``)
        # is run once per value: each run settles every test of it alike, so what one branch
        # builds (an absolute bias) is not merged into what the other does (a relative one).
        flag = _unsettled_flag(fn, env) if fn.cls is None else None
        variants = [env] if flag is None else [{**env, flag: TRUE_CONSTANT}, {**env, flag: FALSE_CONSTANT}]
        frames = [Frame(fn, variant, runtime=runtime, autocast_off=autocast_off, default=default, dispatch=dispatch,
                        at_construction=at_construction, defaulted=defaulted) for variant in variants]
        self.stack.append(fn)
        try:
            for frame in frames:
                try:
                    if isinstance(node, ast.Lambda):
                        frame.returns.append(self.eval(node.body, frame))
                    else:
                        self.exec_block(node.body, frame)
                    frame.exits.append(_stored_on_self(frame.env))
                except _Return:
                    pass
        except RecursionError:
            raise
        finally:
            self.stack.pop()
        if on_self:
            frame = frames[0]
            stored = {name: value for name, value in _stored_on_every_path(frame.exits, incoming).items()
                      if name not in frame.stored_on_some_paths}
            self.memo[(STORES_ON_SELF, key)] = stored
            caller.env.update(stored)
            caller.stored_by_calls.update(stored)
        result = UNKNOWN
        for value in (value for frame in frames for value in frame.returns):
            result = value if result is UNKNOWN else merge(result, value)
        self.memo[key] = result
        return result

    def _bind_params(self, fn: FunctionInfo, spec: ast.arguments, args, kwargs, env, standalone,
                     dispatch: Optional[ClassInfo] = None, self_value: Optional[Value] = None) -> FrozenSet[str]:
        """Binds the parameters in ``env``; returns those bound to a default no caller settles."""
        defaulted: Set[str] = set()
        positional = list(spec.posonlyargs) + list(spec.args)
        defaults = [None] * (len(positional) - len(spec.defaults)) + list(spec.defaults)
        if fn.cls is not None and positional and not is_static(fn.node):
            cls = dispatch or fn.cls
            built = self_value.payload_key if self_value is not None and self_value.sort is Sort.INSTANCE \
                and self_value.payload is cls and isinstance(self_value.payload_key, tuple) else cls.name
            env[positional[0].arg] = Value(sort=Sort.CALLABLE, payload=cls, payload_key=("class", cls.name)) \
                if is_classmethod(fn.node) else Value(sort=Sort.INSTANCE, payload=cls, payload_key=built)
            positional, defaults = positional[1:], defaults[1:]
        default_frame = Frame(None, dict(self.globals), runtime=False, autocast_off=False,
                              default=self._default_dtype())
        # A constructor run on its own binds what the module's instantiations pass, where each
        # passes a literal (``Embedding(128, normalize=True)``).
        own_run = standalone and fn.name == "__init__" and dispatch in (None, fn.cls)
        instantiated = self.model.instantiation_arguments(fn) if own_run else None
        # Or, for a class this module never builds, what the package's other modules pass to its
        # flags (``Rotary(dim)`` in attention.py leaves ``pos_idx_in_fp32=True``): the same
        # settling wherever the class is instantiated.
        elsewhere = own_run and instantiated is None and fn.cls is not None and self.project is not None \
            and bool(self.module_name) and (_may_take_flags(fn.node, fn.cls.node) or _may_take_modules(fn.node, fn.cls.node))
        if elsewhere:
            instantiated = self.project.instantiations_elsewhere(self.module_name, fn.cls.name, fn.node)

        def unpassed(param: ast.arg, default: Optional[ast.AST]) -> Value:
            if instantiated is not None and (not elsewhere or default is None or _is_flag(default)):
                literal = self._literal_arguments(instantiated.get(param.arg, ()), default, default_frame,
                                                  foreign=elsewhere)
                # Of another module's, a required parameter is settled only as a flag (``is_causal=True``).
                if literal is not None and (not elsewhere or default is not None or
                                            isinstance(literal.payload_key, bool)):
                    return literal
            passed_nodes = instantiated.get(param.arg, ()) if instantiated is not None else ()
            # (of another module's arguments, only those that build a class of this one are evaluated here)
            if instantiated is not None and (not elsewhere or passed_nodes and all(
                    getattr(node, HOST_BUILT, False) for node in passed_nodes)):
                module = self._passed_module(passed_nodes, default_frame, default)
                if module is not None:
                    return module
            if default is None:
                return self._unbound_param(fn, param)
            value = self.eval(default, default_frame)
            # A flag's default is only what a caller that leaves it gets: a function run on its
            # own, or called with ``**kwargs``, may get either value, so no branch on it is settled.
            unsure = standalone or UNPACKED_KEYWORDS in kwargs
            if unsure:
                defaulted.add(param.arg)
            return Value(sort=Sort.OTHER) if unsure and isinstance(value.payload_key, bool) else value

        def passed(param: ast.arg, value: Value) -> Value:
            # ``denoise(load_model(), ...)`` into ``model: Flux``: a loader poslint cannot read
            # hands over an instance of the class the parameter is annotated with.
            if _is_opaque(value) and not value.roles and value.payload is None and param.annotation is not None:
                cls = self._annotated_class(param.annotation)
                if cls is not None and self._torch_module_class(cls):
                    return Value(sort=Sort.INSTANCE, payload=cls, payload_key=cls.name)
            return value

        for i, param in enumerate(positional):
            if i < len(args):
                value = passed(param, args[i])
            elif param.arg in kwargs:
                value = passed(param, kwargs[param.arg])
            else:
                value = unpassed(param, defaults[i])
            env[param.arg] = value
        for param, default in zip(spec.kwonlyargs, spec.kw_defaults):
            env[param.arg] = passed(param, kwargs[param.arg]) if param.arg in kwargs else unpassed(param, default)
        if spec.vararg:
            # ``*args``: the positional arguments past the named ones, where a call passes any
            extra = tuple(args[len(positional):])
            env[spec.vararg.arg] = Value(sort=Sort.TUPLE, payload=extra, payload_key=extra) if extra else UNKNOWN
        if spec.kwarg:
            named = {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
            extra = {k: v for k, v in kwargs.items() if k not in named and k != UNPACKED_KEYWORDS}
            env[spec.kwarg.arg] = _keywords(extra) if extra else UNKNOWN
        return frozenset(defaulted)

    def _literal_arguments(self, passed: Sequence[Optional[ast.AST]], default: Optional[ast.AST],
                           frame: Frame, foreign: bool = False) -> Optional[Value]:
        """The literal that every instantiation passes (a call that leaves the parameter passes its
        default); None unless they all pass the same literal. Of ``foreign`` calls (another
        module's), only literals count: their names and configurations are that module's."""
        nodes = [default if node is None else node for node in passed]
        values = {self.eval(node, frame) if _is_literal(node) else None if foreign else self._configured_default(node)
                  for node in nodes}
        return values.pop() if len(values) == 1 and None not in values else None

    def _function_around(self, line: int, classes: bool = False) -> Optional[ast.AST]:
        """The innermost function of this module (or, with ``classes``, class) whose body holds ``line``."""
        nodes = [c.node for c in self.model.classes.values()] if classes else \
            [fn.node for fn in self.model.all_functions() if not isinstance(fn.node, ast.Lambda)]
        around = [n for n in nodes if n.lineno <= line <= (n.end_lineno or n.lineno)]
        return max(around, key=lambda n: n.lineno) if around else None

    def _passed_module(self, passed: Sequence[Optional[ast.AST]], frame: Frame,
                       default: Optional[ast.AST] = None) -> Optional[Value]:
        """The module that every instantiation of this module hands a constructor parameter
        (``Attention(dim, rotary=RotaryEmbedding(32))``, or ``pos_emb=self.pos_emb``, the module the
        instantiating class holds), else None. An instantiation that leaves a default of None (a
        block built once without a rotary) hands none, as ``Rotary(d) if use else None`` does."""
        modules = []
        for node in passed:
            if node is None and is_none(default):
                continue
            if getattr(node, "lineno", None) is None:
                return None  # a default left, or what ``**kwargs`` may pass
            if getattr(node, HOST_BUILT, None):
                built = self._project_class(getattr(node, HOST_BUILT))
                if built is None or not self._torch_module_class(built):
                    return None
                modules.append(Value(sort=Sort.INSTANCE, payload=built, payload_key=built.name))
                continue
            instance = self._own_instance_named(node)
            if instance is not None:
                modules.append(instance)  # ``Rotator(self)``: the instantiating module itself
                continue
            if is_self_attr(node) or isinstance(node, ast.Name):
                # what the instantiating class builds into that attribute, or its function into that local, once
                scope = self._function_around(node.lineno, classes=is_self_attr(node))
                built = [item.value for item in walk(scope) if isinstance(item, ast.Assign)
                         and any(_same_name(target, node) for target in item.targets)
                         ] if scope is not None else []
                node = built[0] if len(built) == 1 else None
            if isinstance(node, ast.IfExp) and is_none(node.orelse):
                node = node.body  # ``Rotary(d) if use_rotary else None``: the module, where there is one
            value = self.eval(node, frame) if isinstance(node, ast.Call) \
                and isinstance(node.func, (ast.Name, ast.Attribute)) else None
            if value is None or not _is_module(value):
                return None
            modules.append(value)
        if not modules:
            return None
        return modules[0] if len({type(m.payload) for m in modules}) == 1 and not any(
            isinstance(m.payload, ClassInfo) for m in modules) else merge_all(modules)

    def _own_instance_named(self, node: ast.AST) -> Optional[Value]:
        """The instance a method of a torch module class of this module runs on, where ``node``
        names it (its first parameter, in that method's own body); else None."""
        if not isinstance(node, ast.Name):
            return None
        scope = self._function_around(node.lineno)
        for cls in self.model.classes.values():
            method = next((m for m in cls.methods.values() if m.node is scope), None)
            if method is None or is_static(scope) or is_classmethod(scope) or isinstance(scope, ast.Lambda):
                continue
            first = (scope.args.posonlyargs + scope.args.args)[:1]
            if first and first[0].arg == node.id and self._torch_module_class(cls):
                return Value(sort=Sort.INSTANCE, payload=cls, payload_key=cls.name)
        return None

    def _configured_default(self, node: Optional[ast.AST]) -> Optional[Value]:
        """The number an instantiation passes where the calling function fixes it from literals and
        configuration defaults: ``config.num_frequencies`` (``config`` a parameter annotated with a
        class that gives the field a literal default), arithmetic on such numbers, and a local name
        assigned once to one (``side = config.image_size // config.patch_size``)."""
        line = getattr(node, "lineno", None)  # (None, too, for what ``**kwargs`` may pass)
        caller = self._function_around(line) if line is not None else None
        if caller is None:
            return None
        number = self._folded_number(node, caller, depth=0)
        if number is None:
            return None
        return Value(sort=Sort.PYINT if isinstance(number, int) else Sort.PYFLOAT, payload_key=("const", number))

    def _folded_number(self, node: ast.AST, caller: ast.AST, depth: int) -> Optional[object]:
        if depth > _FOLD_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            return node.value if type(node.value) in (int, float) else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self._folded_number(node.operand, caller, depth + 1)
            return -inner if inner is not None else None
        if isinstance(node, ast.BinOp) and type(node.op) in _FOLDED_OPERATORS:
            left = self._folded_number(node.left, caller, depth + 1)
            right = self._folded_number(node.right, caller, depth + 1) if left is not None else None
            if right is None:
                return None
            try:
                number = _FOLDED_OPERATORS[type(node.op)](left, right)
            except (ArithmeticError, ValueError):
                return None
            return number if isinstance(number, (int, float)) and math.isfinite(number) else None
        if isinstance(node, ast.Name):
            assigned = _assigned_once(caller, node.id)
            if assigned is None:
                return None  # a parameter, or a name bound more than once
            return self._folded_number(assigned, caller, depth + 1)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            spec = caller.args
            param = next((p for p in spec.posonlyargs + spec.args + spec.kwonlyargs if p.arg == node.value.id), None)
            cls = self._annotated_class(param.annotation) if param is not None else None
            return literal_defaults(cls).get(node.attr) if cls is not None else None
        return None

    def _inherited_construction(self) -> List[Tuple[ClassInfo, FunctionInfo]]:
        """(subclass, inherited construction root) pairs where the root calls, on ``self``, a
        method that the subclass overrides, or where the root is the constructor of an imported
        base (what it stores, through helpers it calls in other modules, is what the subclass's
        instances hold: the imported module's own run does not follow its imports)."""
        pairs = []
        # A class that others here derive from is built as part of them (their constructors run the
        # same root through super()), whatever it inherits: only the leaves run an imported root alone.
        derived_from = {id(base) for cls in self.classes.values() for base in cls.bases}
        for cls in self.classes.values():
            for name in sorted(CONSTRUCTION_ROOTS):
                root = cls.lookup_method(name)
                if root is None or root.cls is cls or root.cls is None or isinstance(root.node, ast.Lambda):
                    continue
                if name == "__init__" and root.home is not None and root.home is not self:
                    if id(cls) not in derived_from:
                        pairs.append((cls, root))
                    continue
                called = {call.func.attr for call in walk(root.node) if isinstance(call, ast.Call)
                          and isinstance(call.func, ast.Attribute) and is_self_receiver(call.func.value, root)}
                if any(cls.lookup_method(m) is not root.cls.lookup_method(m) for m in called):
                    pairs.append((cls, root))
        return pairs

    def _methods_reading_subclass_state(self) -> List[Tuple[ClassInfo, FunctionInfo]]:
        """(subclass, inherited method) pairs of this module where a method that runs after
        construction reads, on ``self``, an attribute that its own class never sets and the
        subclass does (an abstract rotary whose forward reads the ``inv_freq`` each subclass
        registers). Called once construction has run, so that the attributes are known."""
        pairs = []
        for cls in self.classes.values():
            for base in cls.mro()[1:]:
                if self.classes.get(base.name) is not base:
                    continue
                for name, method in base.methods.items():
                    if cls.lookup_method(name) is not method or not method.runtime or \
                            isinstance(method.node, ast.Lambda):
                        continue
                    if any(self._attr_storage(base, attr) is None and base.lookup_method(attr) is None
                           and self._attr_storage(cls, attr) is not None for attr in method.self_attrs_read()):
                        pairs.append((cls, method))
        return pairs

    def _unbound_param(self, fn: FunctionInfo, param: ast.arg) -> Value:
        """A parameter no caller binds. Annotated with a class of the project (``config:
        LlamaConfig``), it carries that class's literal defaults, so that the range the code gives
        (``config.max_position_embeddings``, ``config.image_size // config.patch_size``) is known."""
        value = _unbound(param.arg, self._kind_in(fn, param.arg))
        if annotated_float(param.annotation):
            # ``scale: float`` (or ``Optional[float]``): a Python float, which takes an integer
            # tensor it scales to the default dtype
            return value.with_(sort=Sort.PYFLOAT)
        cls = self._annotated_class(param.annotation)
        if cls is not None and self._torch_module_class(cls):
            # ``model: Model``: an instance a caller built and hands in, holding what Model's
            # constructor stores (its buffers, as module.to() leaves them)
            return Value(sort=Sort.INSTANCE, payload=cls, payload_key=cls.name)
        defaults = literal_defaults(cls) if cls is not None else None
        if not defaults:
            return value
        return value.with_(payload=ConfigDefaults(defaults, float_fields(cls)),
                           payload_key=value.payload_key + (cls.name,))

    def _torch_module_class(self, cls: ClassInfo) -> bool:
        """Whether ``cls`` is a torch module: it derives from ``torch.nn.Module`` through classes of
        the project, or defines a ``forward`` (a model of a library's base, ``PreTrainedModel``)."""
        if cls.lookup_method("forward") is not None:
            return True
        for c in cls.mro():
            home = c.home if c.home is not None else self
            if any((home.names.qualname(node) or "") in TORCH_MODULE_BASES for node in c.base_nodes):
                return True
        return False

    def _annotated_class(self, annotation: Optional[ast.AST]) -> Optional[ClassInfo]:
        for part in annotation_parts(annotation):
            if isinstance(part, ast.Name) and part.id in self.classes:
                return self.classes[part.id]
            found = self._imported_class(part) if isinstance(part, (ast.Name, ast.Attribute)) else None
            if found is not None:
                return found
        return None

    # ---- statements --------------------------------------------------------------------

    def exec_block(self, body: Sequence[ast.stmt], frame: Frame) -> None:
        for stmt in body:
            self.exec_stmt(stmt, frame)

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value, frame)
            for target in stmt.targets:
                self.assign(target, value, frame, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value, frame), frame, stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            current = self.eval(stmt.target, frame)
            right = self.eval(stmt.value, frame)
            value = self.binop(stmt.op, current, right, stmt, stmt.target, stmt.value, frame)
            if current.is_tensor and value.is_tensor and current.prec is not Prec.UNKNOWN:
                # ``t *= scale`` works in place: the tensor keeps its dtype, whatever the operand's
                value = value.with_(prec=current.prec, origin=current.origin)
            if frame.loop_depth and isinstance(stmt.op, ast.Mult) and right.has(Role.POW2):
                # ``value *= ratio`` in a loop: a geometric sequence of powers of two.
                value = value.with_(roles=value.roles | {Role.SLOPES})
            self.assign(stmt.target, value, frame, stmt)
        elif isinstance(stmt, ast.Expr):
            self.eval(stmt.value, frame)
        elif isinstance(stmt, ast.Return):
            value = self.eval(stmt.value, frame) if stmt.value else UNKNOWN
            self._escape(value)
            if frame.cls is not None and self.stack and self.stack[-1].name == "forward":
                # A module that computes angles in its forward and returns them (rearranged): its
                # callers rotate with them. Products made elsewhere went through more than that.
                body = self.stack[-1].node
                for output in _flattened((value,)):
                    self.sinks.leave_module(output, body.lineno, body.end_lineno)
            frame.returns.append(value)
            frame.exits.append(_stored_on_self(frame.env))
            raise _Return()
        elif isinstance(stmt, ast.If):
            self.eval(stmt.test, frame)
            settled = self._settled_test(stmt.test, frame)
            if settled is not None:
                self.exec_block(stmt.body if settled else stmt.orelse, frame)
                return
            narrowing = self._guard_narrowing(stmt.test, frame)
            narrowing[0].update(self._isinstance_narrowing(stmt.test))
            default = self._default_branch(stmt.test, frame)
            self._branches(frame, [stmt.body, stmt.orelse], narrowing=narrowing,
                           precision_guard=self._precision_guard(stmt.test) is not None,
                           ranges_from=None if default is None else 0 if default else 1,
                           bound=isinstance(stmt.test, ast.Compare) and all(
                               isinstance(o, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) for o in stmt.test.ops))
        elif isinstance(stmt, ast.Assert):
            # Past ``assert dtype == torch.float32`` the test holds, as in the body of an ``if``.
            self.eval(stmt.test, frame)
            frame.env.update(self._guard_narrowing(stmt.test, frame)[0])
            frame.env.update(self._isinstance_narrowing(stmt.test))
            frame.env.update(self._bound_narrowing(stmt.test, frame))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            iterated = self.eval(stmt.iter, frame)
            element = Value(sort=Sort.PYINT, roles=frozenset({Role.FREQ_INDEX}), extent=iterated.extent) \
                if iterated.payload_key == "range" else _element_of(iterated)
            self.assign(stmt.target, element, frame, stmt.iter)
            self._loop(frame, stmt)
        elif isinstance(stmt, ast.While):
            self.eval(stmt.test, frame)
            self._loop(frame, stmt)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            off = frame.autocast_off
            for item in stmt.items:
                value = self.eval(item.context_expr, frame)
                if value.payload_key == AUTOCAST_OFF.payload_key:
                    off = True
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, value, frame, item.context_expr)
            saved = frame.autocast_off
            frame.autocast_off = off
            try:
                self.exec_block(stmt.body, frame)
            finally:
                frame.autocast_off = saved
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self._branches(frame, [stmt.body, []])
            for handler in stmt.handlers:
                self._branches(frame, [handler.body, []])
            self._branches(frame, [stmt.orelse, []])
            self.exec_block(stmt.finalbody, frame)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # A nested function escapes with its home: called from another module, it still runs here.
            inner = FunctionInfo(stmt, f"{frame.function.qual}.{stmt.name}" if frame.function else stmt.name,
                                 closure=frame.env, runtime=frame.runtime, home_ref=weakref.ref(self))
            inner.autocast_off = any(self.model.disables_autocast(d) for d in stmt.decorator_list)
            frame.env[stmt.name] = Value(sort=Sort.CALLABLE, payload=inner, payload_key=inner.qual)
            if self.anchor is None:  # its own run (a call another file borrows this module for keeps nothing)
                # Run later in the phase, default dtype and autocast state of where it was defined.
                where = Frame(None, {}, runtime=frame.runtime, autocast_off=frame.autocast_off, default=frame.default)
                self.nested_defined.append((inner, where))
        elif isinstance(stmt, getattr(ast, "Match", ())):
            self.eval(stmt.subject, frame)
            self._branches(frame, [case.body for case in stmt.cases] + [[]])
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            # An import under ``try`` binds the name on that path, so that the ``except`` branch's
            # fallback (``f = None``) is one possibility, not the name's only value.
            for alias in stmt.names:
                if alias.name != "*":
                    frame.env[alias.asname or alias.name.split(".")[0]] = IMPORT_BOUND
        # Other statements (pass, raise, del, global) do not move dtypes.

    def _loop(self, frame: Frame, stmt) -> None:
        """The body runs once or not at all (merged), then ``else``."""
        frame.loop_depth += 1
        try:
            self._branches(frame, [stmt.body, []])
        finally:
            frame.loop_depth -= 1
        self._branches(frame, [stmt.orelse, []])

    def _settled_test(self, test: ast.AST, frame: Frame) -> Optional[bool]:
        """The value of a test that the values it asks about settle, negations included: a flag
        (a local or ``self.<attr>``) holding one known boolean (a constructor flag every
        instantiation sets alike, a literal default a caller left), or a question on what kind of
        object a name holds (``torch.is_tensor(n)`` of a Python number, ``isfunction(t)`` or
        ``callable(t)`` of a lambda or of a tensor); None for any other test."""
        negated = False
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, not negated
        if isinstance(test, ast.Call) and self.names.qualname(test.func) in OTHER_DEVICE_AVAILABILITY:
            return negated  # (no MPS, XPU... backend where CUDA's and the CPU's autocast and conversions apply)
        if isinstance(test, ast.Call):
            answer = self._kind_test(test, frame)
            return None if answer is None else answer != negated
        if isinstance(test, ast.Compare):
            answer = _other_device_test(test)
            if answer is None:
                answer = self._tensor_is_none(test, frame)
            return None if answer is None else answer != negated
        if not ((isinstance(test, ast.Name) and test.id in frame.env) or (is_self_attr(test) and frame.cls)):
            return None
        key = self.eval(test, frame).payload_key
        return key != negated if isinstance(key, bool) else None

    def _tensor_is_none(self, test: ast.Compare, frame: Frame) -> Optional[bool]:
        """``t is None`` (``is not None``) of a local that holds a tensor on every path (a caller
        passed one): False (True); None for any other test."""
        if not (len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) and is_none(test.comparators[0])
                and isinstance(test.left, ast.Name) and test.left.id in frame.env):
            return None
        held = frame.env[test.left.id]
        if held.sort is not Sort.TENSOR or held.optional:
            return None
        return isinstance(test.ops[0], ast.IsNot)

    def _default_branch(self, test: ast.AST, frame: Frame) -> Optional[bool]:
        """The value of ``x is None`` (or ``is not None``) when ``x`` is a configuration field at its
        default None, or a number: both branches run, and the ranges past them are the default's."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
            return None
        tested = self.eval(test.left, frame)
        if tested.payload_key == CONFIG_DEFAULT_NONE.payload_key:
            is_none = True
        elif _const_number(tested) is not None:
            is_none = False
        else:
            return None
        return is_none == isinstance(test.ops[0], ast.Is)

    def _kind_test(self, test: ast.Call, frame: Frame) -> Optional[bool]:
        if not (test.args and isinstance(test.args[0], ast.Name) and test.args[0].id in frame.env):
            return None
        value = frame.env[test.args[0].id]
        if isinstance(test.func, ast.Name) and test.func.id == "isinstance" and self._is_builtin("isinstance", frame):
            asks = "tensor" if len(test.args) == 2 and self.names.qualname(test.args[1]) == "torch.Tensor" else None
        elif isinstance(test.func, ast.Name) and test.func.id == "callable" and self._is_builtin("callable", frame):
            asks = "function"
        else:
            asks = KIND_TESTS.get(self.names.qualname(test.func))
        number = value.sort in (Sort.PYINT, Sort.PYFLOAT)
        function = value.sort is Sort.CALLABLE and isinstance(value.payload, FunctionInfo)
        if asks == "tensor":
            return False if number or function else None
        if asks == "function":
            return True if function else (False if number or value.sort is Sort.TENSOR else None)
        return None

    def _isinstance_narrowing(self, test: ast.AST) -> Dict[str, Value]:
        """``isinstance(pos, int)`` makes ``pos`` a Python int in the ``if`` body."""
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name)):
            return {}
        kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        names = {k.id for k in kinds if isinstance(k, ast.Name)}
        if names == {"int"}:
            return {test.args[0].id: Value(sort=Sort.PYINT)}
        if names and names <= {"int", "float"}:
            return {test.args[0].id: Value(sort=Sort.PYFLOAT if names == {"float"} else Sort.OTHER)}
        return {}

    def _bound_narrowing(self, test: ast.AST, frame: Frame) -> Dict[str, Value]:
        """What an asserted bound proves of a count: past ``assert n <= self.max_len`` (a literal,
        or a default the code gives), ``n`` is at most that."""
        tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        bounded: Dict[str, Value] = {}
        for part in tests:
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
                continue
            op, left, right = part.ops[0], part.left, part.comparators[0]
            if isinstance(op, (ast.Gt, ast.GtE)):
                op, left, right = (ast.Lt() if isinstance(op, ast.Gt) else ast.LtE()), right, left
            if not (isinstance(op, (ast.Lt, ast.LtE)) and isinstance(left, ast.Name) and left.id in frame.env):
                continue
            bound = _const_whole_value(self.eval(right, frame))
            count = frame.env[left.id]
            if bound is not None and count.sort in (Sort.PYINT, Sort.OTHER) and _const_number(count) is None:
                top = bound if isinstance(op, ast.LtE) else bound - 1
                bounded[left.id] = count.with_(sort=Sort.PYINT, magnitude=float(max(top, 0)))
        return bounded

    def _guard_narrowing(self, test: ast.AST, frame: Frame) -> List[Dict[str, Value]]:
        """What a dtype test proves in each branch: the names and ``self.<attr>``s it tests are
        not 16-bit in the branch where the test rules that out."""
        narrowing: List[Dict[str, Value]] = [{}, {}]
        guard = self._precision_guard(test)
        if guard is None:
            return narrowing
        low_in_body, tested = guard
        for expr in tested:
            key = expr.id if isinstance(expr, ast.Name) else f"self.{expr.attr}"
            if isinstance(expr, ast.Name) and key not in frame.env:
                continue
            # (a ``self.<attr>`` stored on some paths only reads what each path holds: eval joins them)
            current = frame.env[key] if key in frame.env and key not in frame.stored_on_flagged_paths \
                else self.eval(expr, frame)
            if current.prec.may_be_16bit:
                narrowing[1 if low_in_body else 0][key] = current.with_(prec=Prec.F32)
        return narrowing

    def _precision_guard(self, test: ast.AST) -> Optional[Tuple[bool, List[ast.AST]]]:
        """A test that tells 16-bit dtypes apart: ``dtype in (torch.float16, torch.bfloat16)``,
        ``torch.finfo(dtype).bits < 32``, ``x.dtype != torch.float32``. Returns whether the body
        is the 16-bit case, and the names and ``self.<attr>``s tested; None for other tests."""
        if id(test) not in self._guards:
            self._guards[id(test)] = self._find_precision_guard(test)
        return self._guards[id(test)]

    def _find_precision_guard(self, test: ast.AST) -> Optional[Tuple[bool, List[ast.AST]]]:
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        for node in ast.walk(test):
            if not isinstance(node, ast.Compare) or len(node.ops) != 1:
                continue
            named = {self.names.qualname(n) for n in ast.walk(node)}
            by_size = "torch.finfo" in named or any(
                isinstance(n, ast.Attribute) and n.attr in ("itemsize", "element_size", "bits") for n in ast.walk(node))
            op = node.ops[0]
            if by_size or {"torch.float16", "torch.bfloat16"} <= named:
                low_in_body = isinstance(op, (ast.In, ast.Eq, ast.Is, ast.Lt, ast.LtE))
            elif named & {"torch.float32", "torch.float64"} and isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
                low_in_body = isinstance(op, (ast.NotEq, ast.IsNot))  # ``x.dtype != torch.float32``
            else:
                continue  # ``dtype == torch.float16`` alone leaves bfloat16 possible
            tested = [n for n in ast.walk(test)
                      if (isinstance(n, ast.Name) and n.id not in ("torch", "self")) or is_self_attr(n)]
            return low_in_body != negated, tested
        return None

    def _branches(self, frame: Frame, blocks: List[Sequence[ast.stmt]],
                  narrowing: Sequence[Dict[str, Value]] = (), precision_guard: bool = False,
                  ranges_from: Optional[int] = None, bound: bool = False) -> None:
        """Run each block from the same start and join what they leave; with ``ranges_from``, the
        magnitudes past the join are that block's (the path a configuration's defaults take)."""
        start = dict(frame.env)
        outcomes = []
        returned = 0
        ranged: Optional[Dict[str, Value]] = None
        for i, block in enumerate(blocks):
            frame.env = dict(start)
            # a test narrows what a read finds (``else:`` of ``if self.inv_freq.dtype != float32``),
            # whatever paths before stored it
            narrowed = frame.stored_on_flagged_paths & set(narrowing[i]) if i < len(narrowing) else set()
            if i < len(narrowing):
                frame.env.update(narrowing[i])
            frame.stored_on_flagged_paths -= narrowed
            try:
                self.exec_block(block, frame)
                outcomes.append(frame.env)
                ranged = frame.env if i == ranges_from else ranged
            except _Return:
                returned += 1
            finally:
                frame.stored_on_flagged_paths |= narrowed
        if not outcomes:
            frame.env = start
            raise _Return()
        merged = dict(outcomes[0])
        guarded = precision_guard and len(outcomes) == len(blocks)
        for env in outcomes[1:]:
            for name in set(merged) | set(env):
                if guarded and name in merged and _upcast_here(start.get(name), merged[name]):
                    continue  # ``if dtype is 16-bit: x = x.float()`` leaves x float32 on both paths
                if name in merged and name in env:
                    merged[name] = merge(merged[name], env[name])
                elif name in frame.stored_by_calls and name not in start:
                    # A method called on one path only stored it: on the other, a read finds what
                    # the module holds (a buffer registered again in float32 on that path only).
                    merged.pop(name, None)
                else:
                    merged[name] = merged.get(name) or env.get(name)
                    if name.startswith("self.") and name not in start:
                        frame.stored_on_some_paths.add(name)
                        if not bound:
                            frame.stored_on_flagged_paths.add(name)
        for name, value in (ranged or {}).items():
            if value.magnitude is not None and merged.get(name) is not None and merged[name].magnitude is None:
                merged[name] = merged[name].with_(magnitude=value.magnitude, interval=value.interval,
                                                  extent=value.extent)
        frame.env = merged

    def assign(self, target: ast.AST, value: Value, frame: Frame, value_node: Optional[ast.AST]) -> None:
        if isinstance(target, ast.Name):
            frame.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            elements = value.payload if value.sort is Sort.TUPLE and isinstance(value.payload, tuple) else None
            star = next((i for i, elt in enumerate(target.elts) if isinstance(elt, ast.Starred)), None)
            if star is None and elements is not None and isinstance(value_node, (ast.Tuple, ast.List)):
                # ``b, d, device, dtype = *x.shape, x.device, x.dtype``: the value's own star spreads
                # over the names at its place; those after it take the last elements, from the end
                star = next((i for i, part in enumerate(value_node.elts) if isinstance(part, ast.Starred)), None)
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self.assign(elt.value, UNKNOWN, frame, None)
                    continue
                if star is not None and elements is not None:
                    # ``b, *axes, _, dtype = *x.shape, x.dtype``: the names after the star take the
                    # last elements, from the end, as far as the value's own star allows
                    part = _unpacked(elements, value_node, i, len(target.elts), star)
                else:
                    # ``q, k = (x.float() for x in (q, k))``: each name gets the comprehension's element
                    part = elements[i] if elements and i < len(elements) else (
                        value if value.sort is Sort.TENSOR else _element_of(value))
                self.assign(elt, part, frame, None)
        elif is_self_attr(target) and frame.cls is not None:
            if _moves_itself(target, value_node) and value.sort is not Sort.INSTANCE \
                    and not self._held_now(frame, target.attr).is_tensor:
                return  # ``self.dit = self.dit.to(device)`` of a module, or of what this round cannot tell yet: itself
            self.assign_attr(frame, target.attr, value, target, value_node)
        elif isinstance(target, ast.Attribute) and target.attr == "data" and is_self_attr(target.value) \
                and frame.cls is not None \
                and self._attr_storage(frame.cls, target.value.attr) in ("buffer", "parameter"):
            # ``self.periods.data = t``: the buffer registered empty now holds t, in t's dtype
            storage = self._attr_storage(frame.cls, target.value.attr)
            self.store_attr(frame, target.value.attr, storage, value, target, value_node)
        elif isinstance(target, ast.Attribute) and target.attr == "weight" and is_self_attr(target.value) \
                and frame.cls is not None and value.is_tensor \
                and isinstance(frame.env.get(f"self.{target.value.attr}", UNKNOWN).payload, _LinearModule):
            # ``self.proj.weight = nn.Parameter(table)``: the layer multiplies by that table from now
            # on, a parameter still (a time encoder's fixed frequencies, TGN-like)
            layer = frame.env[f"self.{target.value.attr}"].payload
            self.assign_attr(frame, target.value.attr, _linear_module(layer.in_features, value, node_key(target)),
                             target.value, value_node)
        elif isinstance(target, ast.Attribute) and is_self_attr(target.value) and frame.cls is not None \
                and frame.runtime and value.is_tensor:
            # ``self.rotary.inv_freq = t`` in forward: what the part's next call reads (after any
            # conversion: nn.Module's setattr puts t in the buffer as it is)
            frame.env[f"self.{target.value.attr}.{target.attr}"] = value
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and frame.cls is not None \
                and self._own_class(self.eval(target.value, frame), frame) is not None:
            # ``Rotary._shared = table``: a class attribute, which ``self._shared`` reads on every
            # instance (a table cached once for all layers)
            self.store_attr(frame, target.attr, "plain", value, target, value_node)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(frame.env.get(target.value.id, UNKNOWN).payload, _Keywords) \
                and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
            # ``kwargs["guidance"] = g`` on a dict of keyword arguments: one more of them
            members = dict(frame.env[target.value.id].payload.members)
            members[target.slice.value] = value
            frame.env[target.value.id] = _keywords(members)
        elif isinstance(target, ast.Subscript):
            # ``pe[:, 0::2] = torch.sin(...)``: the container takes on the roles written into it.
            base = target.value
            if is_self_attr(base) and base.attr in MODULE_TENSOR_DICTS and frame.cls is not None:
                # ``self._buffers["inv_freq"] = t``: what register_buffer does
                name = self.attr_name(target.slice, frame)
                if name is not None:
                    self.store_attr(frame, name, MODULE_TENSOR_DICTS[base.attr], value, target, value_node,
                                    name_node=target.slice)
            elif is_self_attr(base) and frame.cls is not None:
                # ``self.nets["embed"] = Sinusoid(d)`` into an ``nn.ModuleDict()`` (a module under a literal name)
                named = _is_module(value) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)
                held = self.eval(base, frame) if named else UNKNOWN
                if isinstance(held.payload, _ModulesByName):
                    members = {**held.payload.members, target.slice.value: value}
                    self.assign_attr(frame, base.attr, _modules_by_name(members), base, None)
                else:
                    self.write_into_attr(frame, base, value, target, value_node)
            elif isinstance(base, ast.Name) and base.id in frame.env:
                toeplitz = value.has(Role.POSITIONS) and _shifted_per_row(target, value_node)
                if toeplitz:
                    # ``table[i, :i + 1] = ramp[-(i + 1):]``: row i holds the grid shifted by i, key - query
                    value = value.with_(relative=True)
                self.write_into_local(frame, base, value, target, value_node)
                held = frame.env[base.id]
                if toeplitz and held.origin is not None:  # rounded into the table already relative
                    frame.env[base.id] = held.with_(origin=replace(held.origin, relative=True))
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, frame, None)

    def write_into_local(self, frame: Frame, name: ast.Name, value: Value, node: ast.AST,
                         value_node: Optional[ast.AST]) -> None:
        """``buf[:n] = v`` or ``buf.copy_(v)`` for a local tensor ``buf``: ``v`` now lives in it,
        in ``buf``'s dtype. Writing angles or a bias into a 16-bit tensor casts them."""
        current = frame.env[name.id]
        self._note_grid_axes((current, value))
        written = _written_into(current, value)
        if value.roles and current.is_tensor and current.prec.may_be_16bit and not value.prec.may_be_16bit:
            self._record(Cast(node, value_node or node, value, written, frame.site()),
                         ("cast", node_key(node), value, written, frame.site()))
        frame.env[name.id] = written

    def assign_attr(self, frame: Frame, attr: str, value: Value, node: ast.AST, value_node: Optional[ast.AST],
                    name_node: Optional[ast.AST] = None) -> None:
        """``self.attr = value`` (or ``setattr``): ``nn.Parameter``/``nn.Buffer`` values make a
        parameter/buffer; a tensor assigned to an existing buffer or parameter keeps its storage."""
        storage = value.payload_key if value.payload_key in ("parameter", "buffer") else \
            "parameter" if value.payload_key == PARAMETERS_HELD else "plain"
        if storage == "plain":
            existing = self._attr_storage(frame.cls, attr)
            storage = existing if existing in ("buffer", "parameter") and value.is_tensor else "plain"
        self.store_attr(frame, attr, storage, value, node, value_node, name_node=name_node)

    def _is_builtin(self, name: str, frame: Frame) -> bool:
        return name not in frame.env and name not in self.globals and name not in self.functions

    def write_into_attr(self, frame: Frame, attr_node: ast.Attribute, value: Value, node: ast.AST,
                        value_node: Optional[ast.AST]) -> None:
        """``self.buf[:n] = v`` or ``self.buf.copy_(v)``: ``v`` now lives in that tensor."""
        storage = self._attr_storage(frame.cls, attr_node.attr)
        if storage is None:
            return
        current = self.read_attr(attr_node, frame)
        if current.prec is Prec.UNKNOWN:
            # Writing into a tensor keeps its dtype: in a method run before this round knows the
            # attribute, take what construction has stored so far, not an unknown.
            stored = next((bucket[attr_node.attr][1] for bucket in
                           (self._next_attrs.get(c.name, {}) for c in (frame.dispatch or frame.cls).mro())
                           if attr_node.attr in bucket), None)
            current = stored if stored is not None and stored.is_tensor else current
        self._note_grid_axes((current, value))
        written = _written_into(current, value)
        self.store_attr(frame, attr_node.attr, storage, written, node, value_node, written=True)

    def filled_in_forward(self, cls: ClassInfo, attr: str) -> bool:
        """A buffer that construction registers empty and only the forward path fills: a
        conversion between construction and forward finds nothing in it to convert."""
        keys = {(c.name, attr) for c in cls.mro()}
        return bool(keys & self.empty_at_construction) and not keys & self.built_at_construction

    def _attr_storage(self, cls: ClassInfo, attr: str) -> Optional[str]:
        """How ``attr`` is held: by this class or a base (a buffer a base's constructor registers
        stays a buffer when a subclass's method reassigns it)."""
        return (self._held_entry(cls, attr) or (None, None))[0]

    def _held_entry(self, cls: ClassInfo, attr: str) -> Optional[Tuple[str, Value]]:
        """(storage, value) of ``attr`` as stored so far this round, or as the class holds it."""
        pending = next((bucket[attr] for bucket in (self._next_attrs.get(c.name, {}) for c in cls.mro())
                        if attr in bucket), None)
        return pending or cls.lookup_attr(attr)

    def _held_now(self, frame: Frame, attr: str) -> Value:
        """What ``self.<attr>`` holds at this point of ``frame``, read without recording a read."""
        if f"self.{attr}" in frame.env:
            return frame.env[f"self.{attr}"]
        entry = self._held_entry(frame.dispatch or frame.cls, attr)
        return entry[1] if entry is not None else UNKNOWN

    def store_attr(self, frame: Frame, attr: str, storage: str, value: Value, node: ast.AST,
                   value_node: Optional[ast.AST], name_node: Optional[ast.AST] = None, written: bool = False) -> None:
        cls = frame.cls
        if (not frame.runtime or frame.at_construction) and storage != "plain":
            # ``register_buffer("freqs_cis", None)``: nothing there until forward fills it.
            empty = value.payload_key == ("const", None)
            (self.empty_at_construction if empty else self.built_at_construction).add((cls.name, attr))
        if value.payload_key in ("parameter", "buffer"):
            value = value.with_(payload=None, payload_key=value.payload if value.payload in ONE_VALUE_KEYS else None)
        if value.on_cpu and (storage != "plain" or not value.cpu_literal):
            # module.to(device) moves buffers and parameters; a plain attribute stays where it was
            # made, unless code of the project stores it moved (which the merge of its stores shows),
            # or the CPU was only the factories' default (``with torch.device("cuda"):`` around the
            # construction, in a caller, puts it there).
            value = value.with_(on_cpu=False, cpu_literal=False)
        if storage != "plain" and value.sort is not Sort.TENSOR and not value.roles:
            value = UNKNOWN_TENSOR  # a buffer or parameter is a tensor, whatever computed it
        frame.env[f"self.{attr}"] = value
        frame.stored_on_some_paths.discard(f"self.{attr}")
        frame.stored_on_flagged_paths.discard(f"self.{attr}")
        self._escape(value)
        # Stored for the subclass whose instance runs the method (a base's constructor building
        # what the subclass's hook returns), when that subclass is this module's, or the linted
        # file's that borrowed this module for the call (an imported base's constructor).
        owner, keeper = cls, self
        if frame.dispatch is not None:
            host = self.anchor[0] if self.anchor else self
            if self.classes.get(frame.dispatch.name) is frame.dispatch:
                owner = frame.dispatch
            elif host.classes.get(frame.dispatch.name) is frame.dispatch:
                owner, keeper = frame.dispatch, host
                host.stores_for_host += 1
        bucket = keeper._next_attrs.setdefault(owner.name, {})
        old = bucket.get(attr)
        if old:
            rank = {"buffer": 2, "parameter": 2, "plain": 0}
            storage = storage if rank[storage] >= rank[old[0]] else old[0]
            value = value if _extends(value, old[1]) else merge(old[1], value)
        bucket[attr] = (storage, value)
        if self.recording and value.is_tensor:
            self._record(Store(node, cls.name, attr, storage, frame.env[f"self.{attr}"], value_node, frame.site(),
                               name_node, written),
                         ("store", node_key(node), storage, frame.env[f"self.{attr}"], frame.site()))

    def _note_grid_axes(self, parts: Sequence[Value], dim: Optional[int] = None) -> None:
        """Angles (or their cos/sin) of position grids with nothing in common, put side by side in
        one embedding (``cat([x.sin(), x.cos(), y.sin(), y.cos()])``, or written into slices of one
        tensor): each product covers one axis of a grid with that many axes. Tables concatenated
        along their positions' own axis (``dim``) continue one sequence instead."""
        rotary = [p for p in parts if p.recent and p.grids and p.roles & {Role.ANGLES, Role.TRIG, Role.ROTARY_COMPLEX}]
        if dim is not None and any(p.axis is not None and p.ndim is not None and
                                   (dim - p.ndim if dim >= 0 else dim) == p.axis for p in rotary):
            return
        groups = {p.grids for p in rotary}
        if len(groups) < 2 or any(a & b for a, b in itertools.combinations(groups, 2)):
            return
        for part in rotary:
            for key in part.recent:
                self.facts.grid_axes[key] = max(self.facts.grid_axes.get(key, 1), len(groups))

    def _record(self, fact, key) -> None:
        if not self.recording or key in self._seen_facts:
            return
        if self.through_other and not _holds_host_part(fact, self.anchor[0].facts):
            # Reached from the linted file through another module, with nothing of the linted
            # file's in it: the module in between shows it, when that module is linted.
            return
        self._seen_facts.add(key)
        if isinstance(fact, Product):
            self.facts.products.append(fact)
        elif isinstance(fact, Cast):
            self.facts.casts.append(fact)
        elif isinstance(fact, Store):
            self.facts.stores.append(fact)
        elif isinstance(fact, Creation):
            self.facts.creations.append(fact)
        elif isinstance(fact, Trig):
            self.facts.trigs.append(fact)
        elif isinstance(fact, AttrRead):
            self.facts.attr_reads.append(fact)
        elif isinstance(fact, Handoff):
            self.facts.handoffs.append(fact)

    # ---- expressions -------------------------------------------------------------------

    def eval(self, node: Optional[ast.AST], frame: Frame) -> Value:
        if node is None:
            return UNKNOWN
        method = _EVALUATORS.get(node.__class__)
        if method is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child, frame)
            return UNKNOWN
        return method(self, node, frame)

    def _eval_Constant(self, node: ast.Constant, frame: Frame) -> Value:
        v = node.value
        if v is None:
            return NONE_CONSTANT
        if isinstance(v, bool):
            return TRUE_CONSTANT if v else FALSE_CONSTANT
        if isinstance(v, (int, float)):
            key = (type(v), v)
            known = _NUMBER_CONSTANTS.get(key)
            if known is None:
                if len(_NUMBER_CONSTANTS) >= MAX_NUMBER_CONSTANTS:
                    _NUMBER_CONSTANTS.clear()
                known = _NUMBER_CONSTANTS[key] = Value(sort=Sort.PYINT if isinstance(v, int) else Sort.PYFLOAT,
                                                       payload_key=("const", v))
            return known
        if isinstance(v, complex):
            return Value(sort=Sort.PYCOMPLEX)
        return Value(sort=Sort.OTHER, payload_key=("const", v) if isinstance(v, str) else None)

    def _eval_Name(self, node: ast.Name, frame: Frame) -> Value:
        value = frame.env.get(node.id) or self.globals.get(node.id)
        if value is not None and value.payload_key is not IMPORT_BOUND_KEY:
            return value
        if node.id in self.functions:
            fn = self.functions[node.id]
            return Value(sort=Sort.CALLABLE, payload=fn, payload_key=fn.qual)
        if node.id in self.classes:
            return Value(sort=Sort.CALLABLE, payload=self.classes[node.id], payload_key=("class", node.id))
        if node.id == "range":
            return Value(sort=Sort.CALLABLE, payload_key="builtin.range")
        return self._qualified(node, frame)

    def _qualified(self, node: ast.AST, frame: Frame) -> Value:
        qual = self.names.qualname(node)
        if qual is None:
            return UNKNOWN
        if qual in PYTHON_FLOATS:
            number = PYTHON_FLOATS[qual]
            return Value(sort=Sort.PYFLOAT, payload_key=None if number is None else ("const", number))
        if qual in DTYPES:
            return dtype_value(DTYPES[qual], Origin.at(node, f"explicit {qual}", float16=_float16(qual)))
        if qual in COMPLEX_DTYPES:
            return dtype_value(COMPLEX_DTYPES[qual], Origin.at(node, f"explicit {qual}"), is_complex=True)
        if qual.rsplit(".", 1)[-1] in TENSOR_TYPES and qual.startswith("torch."):
            prec = TENSOR_TYPES[qual.rsplit(".", 1)[-1]]
            return Value(sort=Sort.CALLABLE, prec=prec, payload_key=("qual", qual),
                         origin=Origin.at(node, f"explicit {qual}", float16=_float16(qual)))
        found = self._imported(qual)
        if isinstance(found, FunctionInfo):
            return Value(sort=Sort.CALLABLE, payload=found, payload_key=("imported", qual))
        if isinstance(found, ClassInfo):
            return Value(sort=Sort.CALLABLE, payload=found, payload_key=("class", qual))
        if isinstance(found, Value) and found is not UNKNOWN:
            return self.rebased(found, node, qual)
        if qual in LIBRARY:  # (a payload, so that one of two helpers, ``a if flag else b``, is either)
            return Value(sort=Sort.CALLABLE, payload=_LibraryHelper(qual), payload_key=("qual", qual))
        return Value(sort=Sort.CALLABLE, payload_key=("qual", qual))

    def _eval_Attribute(self, node: ast.Attribute, frame: Frame) -> Value:
        if is_self_attr(node) and frame.cls is not None:
            if f"self.{node.attr}" not in frame.env \
                    and self.model.never_defined(frame.dispatch or frame.cls, node.attr):
                raise _Return()  # AttributeError: this path runs no further
            value = self.read_attr(node, frame)
            if node.attr in LOAD_DTYPE_ATTRIBUTES and value.sort is Sort.OTHER and value.payload is None \
                    and not value.roles:  # stored by a base class of another module: the load dtype
                return self._load_dtype(node)
            return value
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and _imported_here(root.id, frame) and self.names.qualname(node):
            return self._qualified(node, frame)
        owner = self.eval(node.value, frame)
        if node.attr == "dtype":
            return self.dtype_of(owner, node.value, frame)
        if isinstance(owner.payload, _LoadedModel):
            return self._loaded_part(owner.payload, node)
        if node.attr in LOAD_DTYPE_ATTRIBUTES and owner.sort is Sort.OTHER:
            return self._load_dtype(node)
        if owner.sort is Sort.INSTANCE and isinstance(owner.payload, ClassInfo):
            return self._instance_member(owner, node, frame)
        if owner.sort is Sort.INSTANCE and isinstance(owner.payload, Either):
            # one of several modules (a factory's result): what each holds or does under the name
            return _joined([self._instance_member(member, node, frame) for member in owner.payload.members
                            if isinstance(member.payload, ClassInfo)])
        if isinstance(owner.payload, _LibraryRotary) and owner.payload.method is None:
            if node.attr == "forward":
                return owner  # ``rotary.forward(t)`` is ``rotary(t)``
            if node.attr in LIBRARY_ROTATING_METHODS:
                return Value(sort=Sort.CALLABLE, payload=_LibraryRotary(node.attr, self.facts.source(node.value)),
                             payload_key=("library rotary", node.attr) + owner.payload_key[1:])
            return UNKNOWN
        if isinstance(owner.payload, _TransformersRotary) and node.attr in LIBRARY[owner.payload.qual].buffers:
            return self._transformers_rotary_buffer(node, owner.payload, frame)
        if node.attr in _layer_parameters(owner.payload):
            return self._layer_parameter(node, frame)
        if owner.sort is Sort.CALLABLE and isinstance(owner.payload, ClassInfo):
            # ``Alibi.gen_slopes(...)``: a static method called through its class.
            method = owner.payload.lookup_method(node.attr)
            if method is not None and is_static(method.node):
                return Value(sort=Sort.CALLABLE, payload=method, payload_key=method.qual)
            return UNKNOWN
        if isinstance(owner.payload, ConfigDefaults) and node.attr in owner.payload.values:
            number = owner.payload.values[node.attr]
            if number is None:
                # (``scale: Optional[float] = None``: a float wherever a test for None lets it through)
                return CONFIG_DEFAULT_NONE.with_(sort=Sort.PYFLOAT) if node.attr in owner.payload.floats \
                    else CONFIG_DEFAULT_NONE
            return Value(sort=Sort.PYINT if isinstance(number, int) else Sort.PYFLOAT, payload_key=("const", number))
        if node.attr in ("T", "mT", "real", "imag", "data"):
            if node.attr in ("real", "imag"):
                return owner.with_(is_complex=False)
            if node.attr in ("T", "mT") and owner.is_tensor and owner.ndim != 1:  # (.T of a vector: itself)
                return _swapped(owner, -2, -1) if node.attr == "mT" or owner.ndim == 2 else owner.with_(axis=None)
            return owner
        if owner.is_tensor or owner.sort is Sort.OTHER:
            if node.attr in ("shape", "ndim"):
                return Value(sort=Sort.PYINT)
            if node.attr == "device":  # (a CPU tensor's device is the CPU: what moves there stays there)
                return DEVICE.with_(on_cpu=True, cpu_literal=owner.cpu_literal) \
                    if owner.is_tensor and owner.on_cpu else DEVICE
            if node.attr in ("is_cuda", "requires_grad"):
                return UNKNOWN
            # Unknown until called: ``params.dim`` is a number, ``x.float`` a method.
            return Value(sort=Sort.OTHER, payload=_MethodOf(owner, node.attr))
        return UNKNOWN

    def attr_name(self, node: Optional[ast.AST], frame: Frame) -> Optional[str]:
        """The attribute a string expression names: ``"inv_freq"``, or a family such as
        ``f"{kind}_inv_freq"`` -> ``"*_inv_freq"``; None when nothing of it is known."""
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            parts = [(self.attr_name(v.value, frame) or WILDCARD) if isinstance(v, ast.FormattedValue)
                     else (v.value if isinstance(v, ast.Constant) else WILDCARD) for v in node.values]
            name = "".join(parts)
            return name if name.replace(WILDCARD, "") else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.attr_name(node.left, frame), self.attr_name(node.right, frame)
            name = (left or WILDCARD) + (right or WILDCARD)
            return name if name.replace(WILDCARD, "") else None
        if isinstance(node, ast.Name) and (node.id not in frame.env or _names_one_literal(frame.function, node.id)):
            # A module constant names one attribute, and so do a required parameter that a caller
            # passes a literal (``self._register("table", ...)`` from the constructor) and a local
            # assigned one literal once; a parameter's default, a loop's variable, or anything
            # unknown may name any.
            key = (frame.env[node.id] if node.id in frame.env else self.globals.get(node.id, UNKNOWN)).payload_key
            if isinstance(key, tuple) and key[0] == "const" and isinstance(key[1], str):
                return key[1]
        return None

    def _own_class(self, value: Value, frame: Frame) -> Optional[ClassInfo]:
        """The class ``value`` names when it is the running method's own (``Rotary``, a
        classmethod's ``cls``) or one of its bases, else None."""
        if value.sort is Sort.CALLABLE and isinstance(value.payload, ClassInfo) \
                and any(c is value.payload for c in frame.cls.mro()):
            return value.payload
        return None

    def _is_own_instance(self, value: Value, frame: Frame) -> bool:
        return frame.cls is not None and value.sort is Sort.INSTANCE and isinstance(value.payload, ClassInfo) \
            and any(c is frame.cls for c in value.payload.mro())

    def _kept_float32(self, cls: ClassInfo, name: str, seen: Optional[Set[int]] = None) -> bool:
        """Whether ``name`` of ``cls`` (or a base) stays float32 whatever a model's conversion does:
        a model's keep-in-float32 list names it, or the project converts the module, or one whose
        part it is, to float32 after construction (where a class of this module holds it, or one of
        another module of the package that imports it), or only plain objects hold the module."""
        for c in cls.mro():
            home = c.home or self
            if id(c) not in self._kept_looked_up and home.follows_imports and home.project is not None \
                    and home.module_name:
                self._kept_looked_up.add(id(c))
                c.kept_float32 |= home.project.kept_float32_elsewhere(home.module_name, c.name)
            if ALL_ATTRS in c.kept_float32 or name in c.kept_float32:
                return True
        # A part of modules that are all kept so (a class that one kept module and one other use is
        # not), or of plain objects inside models, which no model's conversion reaches.
        seen = (seen or set()) | {id(cls)}
        holders = [h for h in (cls.home or self).model.holders_of(cls.name) if id(h) not in seen]
        return bool(holders) and all(self._shields(holder) or self._kept_float32(holder, ALL_ATTRS, seen)
                                     for holder in holders)

    def _shields(self, holder: ClassInfo) -> bool:
        """Whether ``holder`` is a plain object (no ``nn.Module``) that a torch module keeps or
        builds: what it holds is no registered part of that module, so converting the model leaves
        it alone. A plain object no module holds (a trainer) holds a model that users convert."""
        if not is_plain_object(holder, self.base_qualname):
            return False
        home = holder.home or self
        if any(not is_plain_object(h, self.base_qualname) for h in home.model.holders_of(holder.name)):
            return True
        return bool(home.follows_imports and home.project is not None and home.module_name
                    and home.project.built_by_modules_elsewhere(home.module_name, holder.name))

    def base_qualname(self, cls: ClassInfo, node: ast.AST) -> Optional[str]:
        """What a base expression of ``cls`` names, in the module that defines ``cls``."""
        return (cls.home or self).names.qualname(node)

    def _load_dtype(self, node: ast.AST) -> Value:
        """``config.torch_dtype``: the dtype the model was loaded in, the activations'."""
        return dtype_value(Prec.ACTIVATION, Origin.at(node, f"the load dtype ({self.facts.source(node)})",
                                                      Prec.ACTIVATION))

    def read_attr(self, node: ast.AST, frame: Frame, name: Optional[str] = None) -> Value:
        """``self.<attr>``, or ``getattr(self, name)`` at ``node`` with ``name`` given."""
        name = node.attr if name is None else name
        key = f"self.{name}"
        if key in frame.env:
            if key in frame.stored_on_some_paths:
                # On the paths that did not store it (``if "dynamic" in kind: register_buffer(...)``),
                # the read finds what the module holds: a buffer or parameter as converted, or what
                # this call stored. (A plain cache rebuilt on one path is read as rebuilt.)
                held = self._read_held(node, frame, name)
                converted = key in frame.stored_on_flagged_paths \
                    and self._attr_storage(frame.dispatch or frame.cls, name) in ("buffer", "parameter")
                return merge(frame.env[key], held) if converted and held.is_tensor and frame.env[key].is_tensor \
                    else frame.env[key]
            return frame.env[key]
        return self._read_held(node, frame, name)

    def _read_held(self, node: ast.AST, frame: Frame, name: str) -> Value:
        """``self.<name>`` as the instance holds it, whatever this call stored."""
        cls = frame.cls
        built_with = self._constructed_with(frame.env.get("self"), frame.dispatch or cls, name, frame)
        if built_with is not None:
            return built_with
        # A subclass running its base's method: what its own construction stored comes first.
        found = (frame.dispatch or cls).lookup_attr(name)
        method = (frame.dispatch or cls).lookup_method(name)
        if found is None:
            if method is not None and is_property(method.node):  # the read runs the getter
                return self.call(method, [], {}, frame.env.get("self", UNKNOWN), frame)
            if method is not None:
                return Value(sort=Sort.CALLABLE, payload=(method, frame.env.get("self", UNKNOWN)),
                             payload_key=("method", method.qual))
            if self._library_rotary_base(frame.dispatch or cls):
                inherited = self._library_rotary_member(node, name)
                if inherited is not None:
                    return inherited
            inherited = self._library_base_buffer(frame.dispatch or cls, node, name, frame)
            if inherited is not None:
                return inherited
            if held_names(cls, name) & LINEAR_MODULES:  # (the first round: its inputs are not known yet)
                return _linear_module(None)
            return _held_instance(lookup_instances(cls, name, self.classes))
        if found[1].sort is Sort.OTHER and not found[1].roles and found[1].payload is None:
            # ``self.impl: Impl = table[kind](...)``: what evaluation could not tell, the class can.
            held = _held_instance(lookup_instances(cls, name, self.classes))
            if held is not UNKNOWN:
                return held
        return self._held(cls, name, node, frame, *found, own=True)

    def _library_bases(self, cls: ClassInfo) -> Iterable[LibrarySummary]:
        """The summaries of the library classes that ``cls``'s line (its classes of this module) derives from."""
        summaries = (LIBRARY.get(self.names.qualname(base) or "") for owner in cls.mro() if owner.home is self
                     for base in owner.base_nodes)
        return (summary for summary in summaries if summary is not None)

    def _library_rotary_base(self, cls: ClassInfo) -> bool:
        """Whether ``cls`` subclasses a library's rotary module (a ``rotary-module`` summary)."""
        return any(summary.effect == "rotary-module" for summary in self._library_bases(cls))

    def _library_rotary_member(self, node: ast.AST, name: str) -> Optional[Value]:
        """What a subclass of a library rotary module reads from its base: its ``freqs`` (a parameter
        ``model.to()`` converts), ``get_seq_pos`` (positions made in the dtype it is given), its
        ``forward`` and its rotating methods."""
        if name == "freqs":
            reason = "parameter 'freqs' of the library's rotary module"
            return tensor(Prec.CONVERTED, Origin.at(node, reason, Prec.CONVERTED), roles=frozenset({Role.FREQS}))
        if name == "get_seq_pos":
            return Value(sort=Sort.CALLABLE, payload=_LibrarySeqPos(), payload_key=("library seq pos",))
        if name == "forward" or name in LIBRARY_ROTATING_METHODS:
            method = None if name == "forward" else name
            return Value(sort=Sort.CALLABLE, payload=_LibraryRotary(method, "self"),
                         payload_key=("library rotary", name, "self"))
        return None

    @staticmethod
    def _defaulted_fill(call: ast.Call, frame: Frame) -> bool:
        """``full(shape, g)`` with ``g`` a parameter bound to its default in a run on its own: the
        default is one value of many a caller may pass (FLUX's ``guidance=4.0``, called with 3.5)."""
        fill = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "fill_value"), None)
        return isinstance(fill, ast.Name) and fill.id in frame.defaulted

    def _library_base_buffer(self, cls: ClassInfo, node: ast.AST, name: str, frame: Frame) -> Optional[Value]:
        """A float32 frequency buffer that a library base registers at construction (the
        ``inv_freq`` of transformers' 4.37 rotaries), as ``module.to()`` leaves it where it is read."""
        if not any(name in summary.buffers for summary in self._library_bases(cls)):
            return None
        origin = Origin.at(node, f"buffer '{name}' of the library's rotary", Prec.F32)
        return self._held(cls, name, node, frame, "buffer", tensor(Prec.F32, origin, roles=frozenset({Role.FREQS})),
                          own=False)

    def _library_positions(self, call: ast.Call, args: Sequence[Value], kwargs: Dict[str, Value],
                           frame: Frame) -> Value:
        """``get_seq_pos(n, device, dtype, offset)`` of a library rotary module: an ``arange`` of ``n``
        in ``dtype``."""
        given = dict(kwargs) if "dtype" in kwargs or len(args) <= 2 else {**kwargs, "dtype": args[2]}
        dtype = self._dtype_arg(given, call)
        made_in = dtype.prec if dtype is not None else Prec.UNKNOWN
        dtype_node = next((k.value for k in call.keywords if k.arg == "dtype"),
                          call.args[2] if len(call.args) > 2 else call)
        origin = Origin.at(call, f"the dtype '{self.facts.source(dtype_node)}' handed to the library's get_seq_pos",
                           made_in)
        return tensor(made_in, origin, roles=frozenset({Role.POSITIONS}))

    def _instance_member(self, owner: Value, node: ast.Attribute, frame: Frame) -> Value:
        """``owner.name`` for a module instance ``owner``: a bound method, or what it holds."""
        method = owner.payload.lookup_method(node.attr)
        if method and is_property(method.node):
            return self.call(method, [], {}, owner, frame)
        if method:
            return Value(sort=Sort.CALLABLE, payload=(method, owner), payload_key=("method", method.qual))
        if node.attr in owner.payload.record_fields:  # a record's field: what its constructor was given
            key = owner.payload_key
            given = dict(key[1]) if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], tuple) else {}
            return given.get(node.attr, UNKNOWN)
        found = owner.payload.lookup_attr(node.attr)
        if found is not None:  # a submodule's buffer: ``self.rotary.inv_freq``
            return self._held(owner.payload, node.attr, node, frame, *found, own=False)
        if node.attr in MODULE_RETURNING_SELF and self._torch_module_class(owner.payload):
            return Value(sort=Sort.CALLABLE, payload=_ReturnsModule(owner), payload_key=("returns module", node.attr))
        return UNKNOWN

    def _held(self, cls: ClassInfo, name: str, node: ast.AST, frame: Frame, storage: str, value: Value,
              own: bool) -> Value:
        """What reading ``name`` of an instance of ``cls`` gives at ``node``: in the forward path, a
        floating buffer or parameter as ``module.to()`` left it. ``own`` for ``self``'s own (a
        read the fixes may rewrite); a submodule's (``self.rotary.inv_freq``) is converted with
        its parent all the same."""
        if value.sort is Sort.INSTANCE:
            return value
        if self.follows_imports:  # held by a base class of another module: its origin is there
            defining = next((c for c in cls.mro() if c.home is not self and name in c.attrs), None)
            if defining is not None:
                value = self.rebased(value, node, defining.home.path)
        converted = storage in ("buffer", "parameter") and frame.runtime and value.prec is not Prec.INT \
            and not any(family_matches(restored, name) for c in cls.mro() for restored in c.restored_attrs) \
            and not self._kept_float32(cls, name) \
            and not self.filled_in_forward(cls, name)
        if converted and value.prec is Prec.LOW and value.origin is not None:
            # Stored in 16 bits at construction (``inv_freq.to(dtype)`` with ``dtype=torch.half``):
            # 16-bit whether or not the model is converted, in the bits it was stored in.
            float16 = value.origin.float16
            origin = Origin.at(node, f"{storage} '{name}' (stored in {'float16' if float16 else 'bfloat16'} at construction)",
                               Prec.LOW, relative=value.relative, float16=float16, stored=True)
            return value.with_(origin=origin, rounded=None)
        if converted and (value.is_tensor or value.roles):
            if own:
                self._record(AttrRead(node, cls.name, name, frame.site()), ("read", node_key(node)))
            reason = f"{storage} '{name}'"
            # (a buffer of small whole numbers, a 14 x 14 grid's coordinates: the conversion keeps them)
            exact = (value.prec is Prec.INT or value.whole) and value.extent is not None \
                and value.extent <= BF16_EXACT_UP_TO + 1
            origin = Origin.at(node, reason, Prec.CONVERTED, relative=value.relative, exact=exact)
            if value.is_complex:
                # module.to(torch.bfloat16) turns a complex buffer real (it drops the imaginary part).
                return value.with_(sort=Sort.TENSOR, origin=origin,
                                   payload=("complex-buffer", name), payload_key=("complex-buffer", name))
            return value.with_(sort=Sort.TENSOR, prec=Prec.CONVERTED, origin=origin,
                               rounded=None)
        return value

    def _used_as_integers(self, fn: Optional[FunctionInfo]) -> Set[str]:
        """Names that ``fn`` uses the way only integer tensors are used: as an index (``t[ids]``,
        ``embedding(ids, w)``, ``gather``), or tested, whole or in part, for equality with a token
        (``ids == pad``, ``ids[b] == image_token``)."""
        if fn is None:
            return set()
        if id(fn.node) not in self._integer_names:
            names = set()
            parts_of: Dict[str, Set[str]] = {}  # a name bound to a part of another: rows, elements, slices
            for node in walk(fn.node):
                part, whole = _part_binding(node)
                if part is not None:
                    parts_of.setdefault(part, set()).add(whole)
                if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name):
                    names.add(node.slice.id)
                elif isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
                    operands = [node.left, *node.comparators]
                    if not any(isinstance(o, ast.Constant) and isinstance(o.value, float) for o in operands):
                        # ``ids == pad``, and a part of them: ``ids[b] == image_token``
                        tested = [o.value if isinstance(o, ast.Subscript) else o for o in operands]
                        names |= {o.id for o in tested if isinstance(o, ast.Name)}
                elif isinstance(node, ast.Call) and tail_name(node.func) in INDEXING_CALLS:
                    names |= {a.id for a in node.args if isinstance(a, ast.Name)}
            pending = list(names)
            while pending:  # the row of token ids that is compared makes the ids integers
                for whole in parts_of.get(pending.pop(), ()):
                    if whole not in names:
                        names.add(whole)
                        pending.append(whole)
            self._integer_names[id(fn.node)] = names
        return self._integer_names[id(fn.node)]

    def _used_as_complex(self, fn: Optional[FunctionInfo]) -> Set[str]:
        """Names that ``fn`` uses the way only complex tensors are used: handed to
        ``view_as_real`` or ``istft``, or asked for ``.imag``."""
        if fn is None:
            return set()
        if id(fn.node) not in self._complex_names:
            names = set()
            for node in walk(fn.node):
                if isinstance(node, ast.Call) and tail_name(node.func) in COMPLEX_INPUT_CALLS and node.args:
                    first = node.args[0]
                    while isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute):
                        first = first.func.value  # view_as_real(z.permute(...)): z itself
                    if isinstance(first, ast.Name):
                        names.add(first.id)
                elif isinstance(node, ast.Attribute) and node.attr == "imag" and isinstance(node.value, ast.Name):
                    names.add(node.value.id)
            self._complex_names[id(fn.node)] = names
        return self._complex_names[id(fn.node)]

    def _aliases_of_own_state(self, fn: Optional[FunctionInfo]) -> Set[str]:
        """Locals of ``fn`` that every assignment binds to an attribute of the instance
        (``f = self.freq``, ``f = self.freq.to(x.device)``, ``f = self.a if long else self.b``):
        module state under another name, whose dtype is the state's, not the activations'."""
        if fn is None:
            return set()
        if id(fn.node) not in self._state_aliases:
            bound: Dict[str, bool] = {}
            for node in walk(fn.node):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For)) else []
                for target in targets:
                    for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                        own = isinstance(node, ast.Assign) and isinstance(target, ast.Name) \
                            and all(map(_reads_own_attribute, _alternatives(node.value)))
                        bound[name] = bound.get(name, True) and own
            spec = fn.node.args
            params = {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg) if a}
            self._state_aliases[id(fn.node)] = {name for name, own in bound.items() if own and name not in params}
        return self._state_aliases[id(fn.node)]

    def dtype_of(self, owner: Value, owner_node: ast.AST, frame: Frame) -> Value:
        if owner.prec in (Prec.UNKNOWN, Prec.ACTIVATION) and isinstance(owner_node, ast.Name) \
                and owner_node.id in _declared_integers(frame.function):
            # ``ones(..., dtype=input_ids.dtype)`` with ``input_ids: torch.LongTensor``: the annotation
            # outweighs an assumed activation dtype (trusted for the dtype read only: transformers
            # annotates some float embeddings so)
            return dtype_value(Prec.INT, Origin.at(owner_node, f"the dtype of '{owner_node.id}'", Prec.INT))
        if owner.payload_key == LAYER_PARAMETER:
            # ``dtype=self.proj.weight.dtype``: the dtype the model's layers run in, the activations'
            return dtype_value(Prec.ACTIVATION, Origin.at(
                owner_node, f"the activation dtype ({self.facts.source(owner_node)}.dtype)", Prec.ACTIVATION))
        if owner.sort is Sort.TENSOR and owner.prec not in (Prec.UNKNOWN,):
            reason = f"the dtype of {_describe(owner, self.facts.source(owner_node))}"
            float16 = owner.prec is Prec.LOW and owner.origin is not None and owner.origin.float16
            # (its payload: where the tensor's own dtype was decided, which a cast to it follows)
            return dtype_value(owner.prec, Origin.at(owner_node, reason, owner.prec, float16=float16),
                               is_complex=owner.is_complex).with_(payload=owner.origin)
        if owner.sort in (Sort.TENSOR, Sort.OTHER) and not is_self_attr(owner_node) \
                and not (isinstance(owner_node, ast.Name) and owner_node.id in self._aliases_of_own_state(frame.function)):
            src = self.facts.source(owner_node)
            if isinstance(owner_node, ast.Name) and owner_node.id in self._used_as_integers(frame.function):
                return dtype_value(Prec.INT, Origin.at(owner_node, f"the dtype of '{src}'", Prec.INT))
            if isinstance(owner_node, ast.Name) and owner_node.id in self._used_as_complex(frame.function):
                # A complex input (a spectrogram): a complex dtype of a width the code does not say.
                return dtype_value(Prec.UNKNOWN, Origin.at(owner_node, f"the dtype of '{src}'"), is_complex=True)
            # An input of unknown dtype: the activations, which mixed precision makes 16-bit.
            return dtype_value(Prec.ACTIVATION, Origin.at(owner_node, f"the activation dtype ({src}.dtype)",
                                                          Prec.ACTIVATION))
        return dtype_value(Prec.UNKNOWN)

    def _eval_Subscript(self, node: ast.Subscript, frame: Frame) -> Value:
        if is_self_attr(node.value) and node.value.attr in MODULE_TENSOR_DICTS and frame.cls is not None:
            name = self.attr_name(node.slice, frame)  # ``self._buffers["inv_freq"]``: the buffer itself
            if name is not None:
                return self.read_attr(node, frame, name=name)
        value = self.eval(node.value, frame)
        index_value = self.eval(node.slice, frame)
        if value.sort is Sort.TUPLE and isinstance(value.payload, tuple):
            index = node.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, int):
                try:
                    return value.payload[index.value]
                except IndexError:
                    return UNKNOWN
            return merge_all(value.payload) if value.payload else UNKNOWN
        if value.sort is Sort.PYFLOAT or value.sort is Sort.PYINT or isinstance(value.payload, _LoadedModel):
            return value  # (``model.layers[0]``: a part of a loaded model)
        if isinstance(value.payload, (_ModulesByName, _Keywords)):  # ``self.nets["embed"]``, ``kwargs["rotary"]``
            key = node.slice.value if isinstance(node.slice, ast.Constant) else None
            return value.payload.members.get(key, UNKNOWN) if isinstance(key, str) else UNKNOWN
        if _is_list_of(value) and isinstance(value.payload, Value) and value.payload.sort is Sort.INSTANCE:
            return value.payload  # ``self.layers[i]`` of ``ModuleList([Block(d) for _ in range(n)])``
        summary = LIBRARY.get(value.payload_key[1]) if _is_qual(value) else None
        if summary is not None and summary.effect == "rope-init-table":
            return Value(sort=Sort.CALLABLE, payload_key=("library", "rope-init"))
        if not value.is_tensor:
            if value.roles:  # a Python list of slopes, say
                return value
            # (a slice of a table the module fixes is one too; a strided slice still reaches where
            # the whole goes: ``t[..., 0::2] = sin(t[..., 0::2])`` takes the sin of what computed
            # ``t``; a selection by index, ``refs[:, :, 0, :]``, picks one part, and says nothing
            # of the rest)
            return UNKNOWN.with_(products=value.products & {MODULE_CONSTANT},
                                 recent=value.recent if _only_slices(node.slice) else frozenset())
        if value.payload_key == PARAMETERS_HELD:  # ``self.tables[i]``, ``self.tables["x"]``: one of them
            return value.with_(payload_key=None)
        if value.recent & self.cast_candidates and _selects_a_column(index_value):
            # ``boxes[:, 6]`` of a tensor of unknown role cast to 16 bits: one field of a record (a
            # box's yaw), whose cos and sin say nothing of what the cast held
            value = value.with_(recent=value.recent - self.cast_candidates)
        ndim, axis = _index_axes(value, node.slice)
        # A grid's or running count's last entry (``counts[:, -1:]``) is its largest: a total.
        total = value.has(Role.POSITIONS) and _takes_last(node.slice)
        return value.with_(ndim=ndim, axis=axis, total=total)

    def _eval_Dict(self, node: ast.Dict, frame: Frame) -> Value:
        """A dict literal of modules by literal names (what ``nn.ModuleDict`` is built from), or of
        tensors by literal names (keyword arguments a call unpacks: ``model(**{"timestep": t})``),
        else unknown."""
        for key in node.keys:
            if key is not None:
                self.eval(key, frame)
        values = [self.eval(v, frame) for v in node.values]
        named = all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys)
        if named and any(v.sort is Sort.INSTANCE for v in values):
            return _modules_by_name({k.value: v for k, v in zip(node.keys, values)})
        if named and any(v.is_tensor for v in values):
            return _keywords({k.value: v for k, v in zip(node.keys, values)})
        return UNKNOWN

    def _eval_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Value:
        """``dtype or torch.float32``: one of its dtypes (a None operand is never the result of ``or``
        but for the last); any other operands, unknown."""
        values = [self.eval(operand, frame) for operand in node.values]
        dtypes = [v for v in values if v.payload_key != ("const", None)]
        if isinstance(node.op, ast.Or) and dtypes and all(v.sort is Sort.DTYPE for v in dtypes):
            return functools.reduce(merge, dtypes)
        return UNKNOWN

    def _eval_Tuple(self, node, frame: Frame) -> Value:
        elements = tuple(self.eval(e, frame) for e in node.elts)
        return Value(sort=Sort.TUPLE, payload=elements, payload_key=elements)

    _eval_List = _eval_Tuple

    def _eval_ListComp(self, node: ast.ListComp, frame: Frame) -> Value:
        if len(node.generators) == 1 and not node.generators[0].ifs:
            # Over a tuple of known elements (``tuple(a.half() for a in args)``): each element's own.
            iterated = self.eval(node.generators[0].iter, frame)
            if iterated.sort is Sort.TUPLE and isinstance(iterated.payload, tuple) \
                    and iterated.payload_key != MODULE_LIST_KEY and 0 < len(iterated.payload) <= MAX_UNROLLED:
                elements = []
                for element in iterated.payload:
                    inner = Frame(frame.function, dict(frame.env), frame.runtime, frame.autocast_off, frame.default)
                    self.assign(node.generators[0].target, element, inner, None)
                    elements.append(self.eval(node.elt, inner))
                elements = tuple(elements)
                return Value(sort=Sort.TUPLE, payload=elements, payload_key=elements)
        inner = Frame(frame.function, dict(frame.env), frame.runtime, frame.autocast_off, frame.default)
        for gen in node.generators:
            iterated = self.eval(gen.iter, inner)
            element = Value(sort=Sort.PYINT, roles=frozenset({Role.FREQ_INDEX})) \
                if iterated.payload_key == "range" else _element_of(iterated)
            self.assign(gen.target, element, inner, None)
        elt = self.eval(node.elt, inner)
        return Value(sort=Sort.OTHER, roles=elt.roles, prec=elt.prec, payload=elt,
                     payload_key=("list-of", elt.sort.value, elt.roles, elt.products, elt.recent))

    _eval_GeneratorExp = _eval_ListComp

    def _eval_IfExp(self, node: ast.IfExp, frame: Frame) -> Value:
        self.eval(node.test, frame)
        settled = self._settled_test(node.test, frame)
        if settled is not None:
            return self.eval(node.body if settled else node.orelse, frame)
        narrowing = self._guard_narrowing(node.test, frame)
        values = []
        for i, branch in enumerate((node.body, node.orelse)):
            saved = frame.env
            frame.env = {**frame.env, **narrowing[i]}
            try:
                values.append(self.eval(branch, frame))
            finally:
                frame.env = saved
        return merge(*values)

    def _eval_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Value:
        value = self.eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            return UNKNOWN
        if isinstance(node.op, ast.USub):
            number = value.payload_key[1] if isinstance(value.payload_key, tuple) and len(value.payload_key) == 2 \
                and value.payload_key[0] == "const" and type(value.payload_key[1]) in (int, float) else None
            value = value.with_(payload_key=("const", -number)) if number is not None else value
            return negated(value)
        return value

    def _eval_Lambda(self, node: ast.Lambda, frame: Frame) -> Value:
        # Its home runs it: called from another module, it still runs on this module's text.
        fn = FunctionInfo(node, "<lambda>", closure=frame.env, runtime=frame.runtime, home_ref=weakref.ref(self))
        return Value(sort=Sort.CALLABLE, payload=fn, payload_key=("lambda", node_key(node)))

    def _eval_BinOp(self, node: ast.BinOp, frame: Frame) -> Value:
        left = self.eval(node.left, frame)
        right = self.eval(node.right, frame)
        return self.binop(node.op, left, right, node, node.left, node.right, frame)

    def _eval_Compare(self, node: ast.Compare, frame: Frame) -> Value:
        operands = [self.eval(node.left, frame)] + [self.eval(c, frame) for c in node.comparators]
        tensors = [v for v in operands if v.is_tensor or _is_opaque(v)]
        return _boolean(tensors[0]) if tensors else UNKNOWN

    def _eval_NamedExpr(self, node: ast.NamedExpr, frame: Frame) -> Value:
        value = self.eval(node.value, frame)
        self.assign(node.target, value, frame, node.value)
        return value

    def _eval_Starred(self, node: ast.Starred, frame: Frame) -> Value:
        return self.eval(node.value, frame)

    # ---- arithmetic --------------------------------------------------------------------

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST,
              left_node: ast.AST, right_node: ast.AST, frame: Frame) -> Value:
        return _placed(self._binop(op, left, right, node, left_node, right_node, frame), (left, right))

    def _binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST,
               left_node: ast.AST, right_node: ast.AST, frame: Frame) -> Value:
        if isinstance(op, ast.MatMult):
            left, right = _same_dtype_operands(left, right)
            return self.product(node, "@", left, left_node, right, right_node, frame) or \
                tensor(self.promote(left, right, node, frame, division=False).prec,
                       recent=self._contraction_trace(node))
        if isinstance(op, (ast.Mult, ast.Div)) and left.payload_key == ZEROS and left.is_tensor and right.is_number:
            return left  # zeros scaled by a number: zeros, exact in every dtype
        if isinstance(op, ast.Mult):
            if Sort.TUPLE in (left.sort, right.sort) and (left.is_number or right.is_number):
                return left if left.sort is Sort.TUPLE else right  # [t] * 2 repeats the same tensors
            if right.payload_key == ZEROS and right.is_tensor and left.is_number:
                return right
            product = self.product(node, "*", left, left_node, right, right_node, frame)
            if product is not None:
                return product
        over_wavelengths = _over_wavelength_operands(op, left, right)
        if over_wavelengths:
            self._note_operands(node_key(node), left, left_node, right, right_node, frame)
        counter_over_wavelengths = isinstance(op, ast.Div) and right.has(Role.GROWTH) \
            and left.sort is Sort.PYINT and left.has(Role.FREQ_INDEX)
        if isinstance(op, ast.Div) and right.has(Role.GROWTH) and not left.has(Role.GROWTH) \
                and (left.has(Role.POSITIONS) or counter_over_wavelengths
                     or over_wavelengths and self.sinks.rotation(node_key(node))):
            # a quantity scaled by a growing factor, over one: a ratio; an input over wavelengths
            # into a rotation (``cat([sin(x / w1), cos(x / w2)])``): each channel's angle; a loop's
            # counter over wavelengths (``[sin(p / scales) for p in range(n)]``): one row's angles
            product = self.product(node, "/", left, left_node, right, right_node, frame)
            if product is not None:
                return product
        if left.is_number and right.is_number:
            roles = set()
            if isinstance(op, ast.Pow):
                if right.has(Role.FREQ_INDEX) or right.has(Role.POSITIONS):
                    roles.add(power_role(left, right))
                elif left.payload_key == ("const", 2) or left.payload_key == ("const", 2.0):
                    roles.add(Role.POW2)
            roles |= (left.roles | right.roles) & {Role.SLOPES, Role.FREQS, Role.POW2, Role.GROWTH, Role.GROWTH2}
            if isinstance(op, ast.Div) and right.has(Role.GROWTH):
                roles = (roles - {Role.GROWTH}) | {Role.FREQS}
            if isinstance(op, ast.Div) and right.has(Role.GROWTH2):
                roles = (roles - {Role.GROWTH2}) | {Role.SLOPES}
            roles |= sign_of(op, left, right)
            if not roles & {Role.SLOPES, Role.FREQS} and not isinstance(op, ast.Pow):
                roles |= (left.roles | right.roles) & {Role.FREQ_INDEX}
            if isinstance(op, ast.Mult) and (left.has(Role.POW2) or right.has(Role.POW2)):
                roles.add(Role.POW2)
            if Sort.PYCOMPLEX in (left.sort, right.sort):
                sort = Sort.PYCOMPLEX
            elif Sort.PYFLOAT in (left.sort, right.sort) or isinstance(op, ast.Div):
                sort = Sort.PYFLOAT
            else:
                sort = Sort.PYINT
            # (``2 ** i`` of a whole number: a power of two, which every 16-bit dtype holds)
            return Value(sort=sort, roles=frozenset(roles), payload_key=_folded(op, left, right),
                         dyadic=isinstance(op, ast.Pow) and _power_of_two(_const_number(left))
                         and right.sort is Sort.PYINT)
        if (left.is_number and _number_like(right) or _number_like(left) and right.is_number
                or left.payload_key == right.payload_key == NUMBER_LIKE.payload_key) and \
                not isinstance(op, ast.MatMult):
            # ``math.log(base) / (dim - 1)`` with ``dim`` unknown: a number, most likely. What it
            # was computed from still learns where it goes (``t * w * 2 * pi`` into cos/sin).
            # A product's own site too: an operand unknown in this round (a buffer that construction
            # registers) may be a tensor in the next one, where cos/sin confirm the product.
            trace = left.recent | right.recent | ({node_key(node)} if isinstance(op, ast.Mult) else set())
            return NUMBER_LIKE.with_(roles=combined_roles(op, left, right), recent=frozenset(trace),
                                     products=(left.products | right.products) & {MODULE_CONSTANT})
        # ``base ** (arange(0, d, 2) / d)`` with ``base`` untyped (a parameter, a config field): a
        # number, or a 0-dim tensor, neither of which widens the floating exponent's dtype.
        untyped_base = isinstance(op, ast.Pow) and left.sort is Sort.OTHER and right.is_tensor \
            and right.prec not in (Prec.INT, Prec.UNKNOWN)
        result = self.promote(left, right, node, frame, division=isinstance(op, ast.Div) or untyped_base)
        if isinstance(op, (ast.Add, ast.Sub)):
            self._escape(left)
            self._escape(right)
        roles = combined_roles(op, left, right)
        if isinstance(op, ast.Sub) and spacing_of_one_table(left, right):
            roles -= TABLE_ROLES  # edges[2:] - edges[:-2]: a filterbank's band widths, not frequencies
        relative = None
        ndim, axis = _broadcast_axes(left, right)
        operands = [v for v in (left, right) if v.is_tensor]
        thin = False if any(v.thin is False for v in operands) else (
            True if operands and all(v.thin for v in operands) else None)
        if isinstance(op, ast.Sub) and left.has(Role.BIAS) and right.has(Role.QUERY_BIAS):
            # bias - bias.diagonal(): key - query, unless the "diagonal" came from a 1 x N view.
            relative = left.thin is not True
        elif isinstance(op, (ast.Add, ast.Sub)) and left.has(Role.POSITIONS) and right.has(Role.POSITIONS) \
                and isinstance(op, ast.Sub) == (left.has(Role.NEGATIVE) == right.has(Role.NEGATIVE)):
            # a difference of positions: ``k - q``, or ``q + arange(0, -n, -1)`` (one of them negated)
            if left.axis is not None and right.axis is not None:
                relative = left.axis != right.axis
            if relative:
                ndim, axis = max(left.ndim or 0, right.ndim or 0) or None, None
        elif left.has(Role.POSITIONS) or right.has(Role.POSITIONS) or Role.BIAS in roles:
            pos = left if (left.has(Role.POSITIONS) or left.has(Role.BIAS)) else right
            relative = pos.relative
            offset = right if pos is left else left
            if relative and isinstance(op, (ast.Add, ast.Sub)) and offset.is_number:
                # key - query + (S - 1): the diagonal moves to an offset that bfloat16 may not hold.
                shift = _const_number(offset)
                relative = shift is not None and abs(shift) <= BF16_EXACT_UP_TO
        if isinstance(op, ast.Pow):
            recent = frozenset()  # a power is another quantity: a squared distance is no linear bias
        else:
            recent = self._trace(node, left, right) \
                if isinstance(op, ast.Mult) or over_wavelengths or counter_over_wavelengths \
                else self._passed_on(left, right)
        if isinstance(op, (ast.Add, ast.Sub)) and not (left.is_number or right.is_number):
            recent = recent | {self.sinks.add_terms(node, left, right)}  # scores + bias: softmax may confirm
            for term, phase, phase_node in ((left, right, right_node), (right, left, left_node)):
                # (a tensor the module holds, or an attribute of no role the first round of a
                # module's analysis does not know as one yet: a buffer its construction registers)
                held = held_by_module(phase) or not phase.roles and _reads_own_attribute(phase_node)
                if isinstance(op, ast.Add) and held and term.recent and not held_by_module(term) \
                        and (term.is_tensor or term.sort is Sort.OTHER):
                    self.sinks.shift_phase(term)
        whole_extent = _whole_extent(op, left, right)
        bounds = _range(op, left, right)
        if bounds is None and isinstance(op, ast.Div) and left.grids and left.interval is not None \
                and left.interval[0] >= 0 and {self.grid_ends.get(grid) for grid in left.grids} == {ast.dump(right_node)}:
            # ``arange(0.5, n) / n``: an ascending grid over its own end, within [0, 1) (not a grid
            # scaled first: ``-log(p) * arange(h) / h`` lies within [-log(p), 0]); below 1, so that
            # ``* 16`` stays in the binade under 16, where bfloat16's steps are half as wide
            bounds = (0.0, math.nextafter(1.0, 0.0))
        magnitude = max(abs(bounds[0]), abs(bounds[1])) if bounds else None
        value = result.with_(roles=roles - {Role.QUERY_BIAS}, relative=relative, ndim=ndim, axis=axis, thin=thin,
                             extent=_remainder_extent(op, left, right) or _shifted_extent(op, left, right) or whole_extent
                             or (None if magnitude is None else math.ceil(magnitude) + 1),
                             whole=whole_extent is not None, dyadic=_dyadic(op, left, right),
                             magnitude=magnitude, interval=bounds,
                             # a total plus a small number (``counts[:, -1:] + eps``) still bounds what it totals
                             total=isinstance(op, (ast.Add, ast.Sub)) and (left.total and right.is_number or
                                                                          right.total and left.is_number),
                             series=series_ops.binary(op, left, right, result.prec),
                             products=_combined_products(left, right), recent=recent,
                             is_complex=left.is_complex or right.is_complex or
                             Sort.PYCOMPLEX in (left.sort, right.sort),
                             periodic=None)  # (``q * cos``: no longer the cos itself)
        if isinstance(op, ast.Mult) and self.recording and (left.has(Role.ANGLES) or right.has(Role.ANGLES)):
            literal = _const_number(right if left.has(Role.ANGLES) else left)
            if isinstance(literal, (int, float)) and literal:
                self.facts.literal_scalings[node_key(node)] = abs(literal)
        if isinstance(op, ast.Mult) and Sort.PYCOMPLEX in (left.sort, right.sort) and \
                (left.has(Role.ANGLES) or right.has(Role.ANGLES)):
            value = value.with_(roles=value.roles | {Role.ROTARY_COMPLEX})
        if isinstance(op, ast.Mult) and Sort.PYCOMPLEX in (left.sort, right.sort) and value.is_tensor:
            value = value.with_(products=value.products | {IMAGINARY_MULTIPLE})
        if isinstance(op, ast.Mult) and any(one.is_tensor and one.is_complex and not other.is_complex
                                            and other.has(Role.ANGLES) for one, other in ((left, right), (right, left))):
            # a complex tensor (a query viewed as complex) times real angles: rotated data, no angles
            # (a rotation multiplies by exp(i * angle), never by the angle)
            value = value.with_(roles=value.roles - {Role.ANGLES})
        if whole_extent is not None and value.origin is not None and value.origin.node is node:
            # isnan(x) * 2.0 takes the default dtype here, and holds 0 and 2: exactly
            value = value.with_(origin=replace(value.origin, exact=True))
        elif _scaled_past_exact(op, left, right, value):
            value = value.with_(origin=replace(value.origin, exact=False))
        if isinstance(op, (ast.Add, ast.Sub)):
            # one value plus a grid (``zeros(h, w)[..., 1] + arange(h)[:, None]``) is that grid, and a
            # floating tensor plus an integer grid holds that grid too (``ids[..., 2] + arange(w)``)
            for one, other in ((left, right), (right, left)):
                if _holds_one_value(one) and other.grids and not value.grids:
                    value = value.with_(grids=other.grids, axes=other.axes)
                elif other.grids and other.prec is Prec.INT and one.is_tensor and one.prec not in (Prec.INT, Prec.UNKNOWN):
                    value = value.with_(grids=value.grids | other.grids)
        if _holds_one_value(value) and not all(_holds_one_value(v) or _exact_fill(v) for v in (left, right)):
            # ones * timestep holds the timesteps (one per call, many across calls); ones times a number
            # fixed for every call (a literal, the module's own attribute: a clean timestep's scale) one value
            fixed = isinstance(op, (ast.Mult, ast.Div)) and any(
                v.is_number and (_const_number(v) is not None or is_self_attr(n))
                for v, n in ((left, left_node), (right, right_node)))
            # (one value 16 bits held, scaled past what they hold: ``ones(b, dtype=x.dtype) * 999``
            # holds 1000, and ``full(b, 6.0, dtype=bf16) * 1000.0`` 6016, wrong on every call)
            held = [_combined(op, _one_value(side), _const_number(other), side is left)
                    for side, other in ((left, right), (right, left))
                    if _one_value(side) is not None and _const_number(other) is not None]
            held = held[0] if held and held[0] is not None else None
            moved = held is not None and value.prec.may_be_16bit and _rounds_past_exact(held)
            value = value.with_(payload_key=ONE_VALUE if fixed and not moved else None,
                                payload=held if fixed and not moved else None)
        if isinstance(op, ast.Mult) and any(
                v.has(Role.POSITIONS) and not w.is_number and w.payload_key != NUMBER_LIKE.payload_key and w.ndim != 0
                and (unknown_operand(w.with_(roles=w.roles - {Role.NEGATIVE})) or w.has(Role.POSITIONS))
                for v, w in ((left, right), (right, left))):
            # (a sign is no role: ``-rates[:, None] * arange(n)`` is scaled by an input too)
            value = value.with_(products=value.products | {SCALED_BY_INPUT})
        if roles & {Role.FREQS, Role.SLOPES, Role.GROWTH}:  # (a growing table: wavelengths, or bands above one)
            value = self._creation(node, value, frame)
        return value

    def promote(self, left: Value, right: Value, node: ast.AST, frame: Frame, division: bool) -> Value:
        """torch's type promotion over the lattice (PRECISION.md section 3)."""
        tensors = [v for v in (left, right) if v.is_tensor]
        if not tensors:
            return UNKNOWN
        floats = [v for v in tensors if v.prec not in (Prec.INT, Prec.UNKNOWN)]
        # A zero-dimensional tensor takes part like a Python number: it does not widen a tensor of
        # dimensions (a bfloat16 index times a float32 0-dim tensor is bfloat16).
        floats = [v for v in floats if v.ndim != 0] or floats
        # (nor does one of unknown dtype: ``inv_freq / (ids.max() / n)`` keeps the buffer's dtype)
        dimensioned = any(v.ndim != 0 for v in floats)
        # An untyped operand of a true division (``dim``, ``self.scale``) is almost always a
        # Python number; elsewhere it could be a float tensor, so the result stays unknown.
        numeric = [v for v in (left, right) if v.sort is Sort.PYFLOAT or v.payload_key == NUMBER_LIKE.payload_key]
        unknown = any(v.prec is Prec.UNKNOWN and not (dimensioned and v.ndim == 0) for v in tensors) or (not division and any(
            v.sort is Sort.OTHER and v.payload_key != NUMBER_LIKE.payload_key for v in (left, right)))
        for prec in (Prec.F64, Prec.F32):
            for v in floats:
                if v.prec is prec:
                    return v.with_(rounded=_promoted_loss(left, right) or _first_rounded(left, right))
        if unknown:
            # (whatever dtype the result has, what a 16-bit operand lost when it was made stays lost:
            # ``arange(n, dtype=self.inv_freq.dtype) % chunk``)
            return tensor(Prec.UNKNOWN, rounded=_promoted_loss(left, right) or _first_rounded(left, right))
        if floats:
            # Of two operands 16 bits alike, the one they rounded speaks for the result: a grid of
            # whole numbers 16 bits hold (``arange(1, 5, dtype=x.dtype)``) lost nothing.
            return max(floats, key=lambda v: (_RANK_LOW[v.prec], not (v.origin is not None and v.origin.exact)))
        # Integer tensors only: a Python float operand or a true division yields the default dtype.
        if division or numeric:
            return self.default_tensor(node, frame, "an integer tensor combined with a Python float "
                                       "or a true division")
        return tensor(Prec.INT)

    def default_tensor(self, node: ast.AST, frame: Frame, how: str) -> Value:
        default = frame.default
        if default.prec is Prec.DEFAULT:
            return tensor(Prec.DEFAULT, Origin.at(node, f"the default dtype ({how})", Prec.DEFAULT))
        return tensor(default.prec, Origin.at(node, f"the default dtype set by {default.origin.reason}", default.prec)
                      if default.origin else None)

    def product(self, node: ast.AST, op: str, a: Value, a_node: ast.AST, b: Value, b_node: ast.AST,
                frame: Frame) -> Optional[Value]:
        """Record and return ``positions x factor``, or None when this is not such a product."""
        def factor_of(v: Value) -> bool:
            if op == "/":  # positions / base ** (index / d): the divisor is the (inverted) frequency
                return v is b
            return (v.has(Role.FREQS) or v.has(Role.SLOPES) or self._blended_frequencies(v)) and \
                v.sort in (Sort.TENSOR, Sort.OTHER, Sort.PYFLOAT)

        key = node_key(node)
        if op == "einsum" and isinstance(node, ast.Call) and len(_summed_indices(node)) > 1:
            return None  # summed over channels and taps (a convolution's weights): no coordinates projected
        for one, one_node, other in ((a, a_node, b), (b, b_node, a)):
            if op == "*" and _holds_one_value(one) and one.payload_key == "ones" and _is_opaque(other) \
                    and not isinstance(one_node, ast.Attribute) and not held_by_module(one):
                # ``t * ones(len(x), dtype=x.dtype)``: a number (a sampler's time, a 0-dim tensor)
                # broadcast to a batch, which takes the ones' dtype; a tensor of dimensions would need
                # no ones to be that shape (not a module's scale that starts at ones: ``self.weight * x``)
                return tensor(one.prec, one.origin, rounded=one.rounded, ndim=one.ndim)
            if _holds_one_value(one) and other.is_tensor and not _holds_one_value(other):
                # Against ones (a broadcast written as a product or a matmul) the other operand's
                # values come out as they went in; one exact value scales without rounding
                # anything a position grid holds. Neither is an angle product.
                if one.payload_key != "ones":
                    return None
                promoted = self.promote(a, b, node, frame, division=False)  # ones of 16 bits make a 16-bit grid
                return other.with_(prec=promoted.prec, origin=promoted.origin, rounded=promoted.rounded,
                                   ndim=None, axis=None, thin=None)
        self._note_operands(key, a, a_node, b, b_node, frame)
        channel = _channel_operand(op, node)  # (of a product that sums nothing: the operand along the channels)

        def table(v: Value) -> bool:
            return v.has(Role.FREQS) or v.has(Role.SLOPES)

        # (a table beside angles only guessed from a blend, ``(pts @ w) * exp(-c * arange(d))``:
        # the table is the factor; the guess was the positions, scaled (superseded below))
        if factor_of(a) and (not factor_of(b) or table(a) and not table(b)):
            factor, factor_node, pos, pos_node = a, a_node, b, b_node
        elif factor_of(b) and (not factor_of(a) or table(b) and not table(a)):
            factor, factor_node, pos, pos_node = b, b_node, a, a_node
        elif self.sinks.rotation(key) and _own_state(a, a_node) != _own_state(b, b_node) \
                and (a if _own_state(a, a_node) else b).ndim != 0:
            # A product that reaches cos/sin with a tensor the module holds (a buffer, a parameter,
            # or a plain attribute its constructor drew): the module tensor is the frequencies,
            # whatever computed it (another file, a lookup table of init functions, a Gaussian
            # projection); the other operand may be an input cast to its dtype (SAM's coordinates).
            # (Not a zero-dimensional one, ``torch.tensor(math.pi)`` in a buffer: a scale of the angles.)
            factor, factor_node, pos, pos_node = (a, a_node, b, b_node) if _own_state(a, a_node) \
                else (b, b_node, a, a_node)
            self.guessed.add(key)
        elif self.sinks.rotation(key) and is_grid(a) != is_grid(b) and held_by_module(a if is_grid(a) else b) \
                and not held_by_module(b if is_grid(a) else a) and unknown_operand(b if is_grid(a) else a):
            # A grid the module holds (a buffer made by linspace(1, max_freq, n)) times an input,
            # into cos/sin: the input carries the positions (coordinates), the grid is the frequencies.
            factor, factor_node, pos, pos_node = (a, a_node, b, b_node) if is_grid(a) else (b, b_node, a, a_node)
            self.guessed.add(key)
        elif op in ELEMENTWISE_PRODUCTS and self.sinks.rotation(key) and is_grid(a) != is_grid(b) and (
                _along_dims(a if is_grid(a) else b, b if is_grid(a) else a, self.sinks.channel_dims.get(key, ()))
                or _vector_along_last(a if is_grid(a) else b, _written_as(b_node if is_grid(a) else a_node, frame),
                                      self.sinks.channel_dims.get(key, ()))):
            # A grid along the axis that cos and sin are concatenated along indexes the channels:
            # harmonic numbers, the frequencies of whatever the other operand holds (a time of day;
            # ``x.unsqueeze(-1) * (arange(1, k + 1) * 2 * pi)``, the vector along x's new last axis).
            # (Elementwise only: a matrix product's axes are not its operands'.)
            factor, factor_node, pos, pos_node = (a, a_node, b, b_node) if is_grid(a) else (b, b_node, a, a_node)
            factor = factor.with_(roles=(factor.roles - {Role.POSITIONS}) | {Role.HARMONICS})
            self.guessed.add(key)
        elif self.sinks.rotation(key) and is_grid(a) != is_grid(b) and unknown_operand(b if is_grid(a) else a) \
                and channel == (0 if is_grid(a) else 1):
            # A grid that gives the channels of a product summing nothing (``outer(t, bands)``,
            # ``einsum("j,i->ij", bands, t)``) times an input, into cos and sin: the grid indexes
            # the channels, so it is the frequencies and the input the coordinates.
            factor, factor_node, pos, pos_node = (a, a_node, b, b_node) if is_grid(a) else (b, b_node, a, a_node)
            factor = factor.with_(roles=(factor.roles - {Role.POSITIONS}) | {Role.FREQS})
            self.guessed.add(key)
        elif self.sinks.rotation(key) and is_grid(a) != is_grid(b) and unknown_operand(b if is_grid(a) else a) \
                and not _only_symmetric_grids(a if is_grid(a) else b, self.symmetric_grids) \
                and not (b if is_grid(a) else a).products & {PHASE, UNIFORM_DRAW}:
            # A position grid times something unknown, into cos/sin: that something is frequencies,
            # here and wherever the same variable is used next. (Not a phase, ``atan2(y, x)``: the
            # grid holds harmonic orders of that angle (a polar basis). Nor a uniform draw: a point
            # drawn within an interval (a slice sampler's angle). Nor a grid from -l to l:
            # orders times an angle build a rotation matrix (Wigner's); relative positions, which
            # such grids also hold, meet a frequency table of their own.)
            factor, factor_node, pos, pos_node = (b, b_node, a, a_node) if is_grid(a) else (a, a_node, b, b_node)
            if isinstance(factor_node, ast.Name) and factor_node.id in frame.env:
                frame.env[factor_node.id] = factor.with_(roles=factor.roles | {Role.FREQS})
            self.guessed.add(key)
        elif self.sinks.rotation(key) and is_grid(a) != is_grid(b) and _growing(b if is_grid(a) else a):
            # A position grid times a growing table (``2 ** linspace(0, k, n) * pi``), into cos/sin:
            # Fourier features, whose frequencies grow with the channel instead of decaying.
            factor, factor_node, pos, pos_node = (b, b_node, a, a_node) if is_grid(a) else (a, a_node, b, b_node)
            factor = factor.with_(roles=factor.roles | {Role.FREQS})  # (still growing: what its rounding does)
        elif self.sinks.rotation(key) and _growing(a) != _growing(b) and unknown_operand(b if _growing(a) else a) \
                and (held_by_module(a if _growing(a) else b) or _reads_own_attribute(a_node if _growing(a) else b_node)
                     or op in CUDA_AUTOCAST_LOWERED):
            # An input times a growing table the module holds (NeRF's octaves ``2 ** arange(L) * pi`` in
            # a buffer, or in a plain attribute its constructor sets) into cos and sin: the table is
            # the frequencies, the input the coordinates. So
            # is one made on the spot and multiplied by a product autocast lowers (an einsum of pixel
            # coordinates and octaves). (One made on the spot and multiplied elementwise, GLIGEN's
            # scale of box coordinates, is left alone.)
            factor, factor_node, pos, pos_node = (a, a_node, b, b_node) if _growing(a) else (b, b_node, a, a_node)
            factor = factor.with_(roles=factor.roles | {Role.FREQS})
            self.guessed.add(key)
        elif self.sinks.rotation(key) and is_grid(a) and is_grid(b) and _channel_vector(a) != _channel_vector(b) \
                and not _along_channels(b if _channel_vector(a) else a):
            # Two grids, one a vector that broadcasting lays along the last axis, the other varying
            # along earlier ones, into cos and sin: the vector indexes the channels, so it is the
            # frequencies (perceiver's Fourier bands ``linspace(1, max_freq / 2, n)``).
            factor, factor_node, pos, pos_node = (a, a_node, b, b_node) if _channel_vector(a) else (b, b_node, a, a_node)
            factor = factor.with_(roles=(factor.roles - {Role.POSITIONS}) | {Role.FREQS})
        elif self.sinks.rotation(key) and is_grid(a) and is_grid(b) and channel is not None \
                and not _only_symmetric_grids((a, b)[channel], self.symmetric_grids):
            # ``outer(positions, bands)`` of two grids into cos and sin (or an einsum that sums
            # nothing, ``"..., f -> ... f"``): the operand that gives the result's last axis, the
            # channels, is the frequencies (an axial rotary's ``linspace(1, max_freq / 2, n) * pi``)
            factor, factor_node, pos, pos_node = (b, b_node, a, a_node) if channel \
                else (a, a_node, b, b_node)
            factor = factor.with_(roles=(factor.roles - {Role.POSITIONS}) | {Role.FREQS})
        elif key in self.sinks.attention and is_grid(a) != is_grid(b) and unknown_operand(b if is_grid(a) else a) \
                and not _filled_only(a if is_grid(a) else b) and op not in SAME_DTYPE_PRODUCTS:
            # A position grid times something unknown, handed to attention as a bias: the
            # something is ALiBi's per-head slopes (a constructor argument, a buffer, a parameter).
            # (Not times steps that vary along no axis, ``full(n, t_next) - full(n, t)``: an Euler
            # step's length, no distance between a query and its keys. Nor a matrix product: slopes
            # scale each head's distances by broadcasting; ``scores @ coefficients`` before a
            # softmax is a ranking's relaxation, NeuralSort's.)
            factor, factor_node, pos, pos_node = (b, b_node, a, a_node) if is_grid(a) else (a, a_node, b, b_node)
            factor = factor.with_(roles=factor.roles | {Role.SLOPES})
        else:
            return None
        if op in SAME_DTYPE_PRODUCTS and factor is b and WIDE_RANDOM_DRAW in factor.products \
                and not _transposed(factor_node):
            return None  # ``h @ w`` with ``w = randn(256, d)``: a learned map of activations, as a wide Linear
        # One decoding step's angles, ``sin(angle * (slen - 1))``: frequencies times a Python int
        # that is not a literal (a length, a step), on its way to cos/sin. A literal is a scale.
        step = pos.sort is Sort.PYINT and _const_number(pos) is None and factor.is_tensor \
            and (factor.has(Role.FREQS) or op == "/" and factor.has(Role.GROWTH)) and key in self.sinks.trig
        if (pos.is_number and not step) or pos.sort in (Sort.DTYPE, Sort.CALLABLE, Sort.INSTANCE, Sort.TUPLE):
            return None
        if _holds_one_value(pos):
            return None  # zeros, ones, full(shape, 6): one exact value has nothing to collide with or round
        # (drawn in a dtype the code gives, the features' or a 16-bit one: a draw in the default
        # dtype is a training step's, which runs with the float32 default)
        sampled_times = UNIFORM_DRAW in pos.products and PHASE not in pos.products and factor.has(Role.FREQS) \
            and pos.prec is not Prec.DEFAULT
        if pos.products & NOT_POSITIONAL and not pos.has(Role.POSITIONS) and not sampled_times:
            # a phase (atan2) or a random draw times learned orders: no position in it (but times
            # drawn uniformly, ``rand(b)``, times a frequency table: a diffusion time's sinusoid)
            return None
        if _shared_grid_variable(pos_node, factor_node, frame):
            return None  # index * base ** (-index / d): frequencies times their own index, no position
        if factor.is_number and not pos.is_tensor:
            return None
        if any(_is_grid_key(key) for key in pos.products & factor.products):
            # exp(-t) * (t[i + 1] - t[i]) over a linspace of times: a factor computed from the
            # positions' own grid is a schedule, not frequencies (those index the channels).
            return None
        superseded: frozenset = frozenset()  # (earlier products this one shows were no angles, once it is one)
        scaled_input = False  # (the positions are such a product's result: an input, scaled)
        if self._blended_frequencies(factor) and pos is not factor:
            # ``inv_freq * (1 - ramp)``, taken for angles because it reached cos/sin, is multiplied
            # by positions here: it was frequencies blended per channel (YaRN), not angles.
            superseded = factor.recent
            factor = factor.with_(roles=(factor.roles - {Role.ANGLES}) | {Role.FREQS})
        if factor.has(Role.SLOPES) and not factor.has(Role.FREQS) and key in self.sinks.trig:
            # A geometric table whose product reaches cos/sin is frequencies, whatever its base
            # (an axial rotary's ``logspace(0, k, n, base=2)`` scales): no bias added to scores.
            factor = factor.with_(roles=(factor.roles - {Role.SLOPES}) | {Role.FREQS})
        kind = "alibi" if factor.has(Role.SLOPES) and not factor.has(Role.FREQS) else "rope"
        if kind == "alibi" and key in self.sinks.exponentiated:
            return None  # exp(-slope x distance) weighs by decay: a kernel, no bias added to scores
        if factor.has(Role.FREQS) and pos.has(Role.ANGLES) and pos.recent and pos.recent <= self.guessed:
            # ``(t * scale) x inv_freq``: what an earlier product guessed to be angles (a grid
            # times something unknown, on its way to cos/sin) was the positions, scaled.
            # (positions where a grid made them; an input mapped by a matrix, ``pts @ w``, is an
            # input still: coordinates of no known kind)
            superseded = superseded | pos.recent
            scaled_input = True
            pos = pos.with_(roles=(pos.roles - {Role.ANGLES}) | ({Role.POSITIONS} if pos.grids else set()))
        # Positions are a grid by construction, or whatever a product with frequencies that reaches
        # cos/sin/polar multiplies them by (an input of any name). Until such a sink confirms it, in
        # this round or the last, the product stays plain arithmetic: ``inv_freq * scale`` is still
        # frequencies, and so is ``inv_freq * (1 / factors)`` with a floating tensor the module
        # holds (LongRoPE's per-frequency factors: positions are not module state of unknown role).
        output = key in self.sinks.returned and key not in self.sinks.trig
        # (a loop counter over ``range(n)`` times frequencies into cos/sin is a position, row by row)
        counter = step and pos.roles == {Role.FREQ_INDEX}
        if not pos.has(Role.POSITIONS) and not scaled_input and ((pos.roles and not counter) or kind == "alibi"
                                            or not (key in self.sinks.trig or output)
                                            or module_state(pos)
                                            or _same_single_axis(pos, factor) and op not in ("outer", "ger")):
            # (two vectors along one axis: a per-channel blend of frequencies, YaRN's ramp, not angles;
            # unless an outer product lays them on two axes)
            return None
        self.facts.superseded |= superseded
        if output and self.recording:
            self.facts.rotary_products.add(key)  # a module's output, its cos and sin taken elsewhere
        (self.positions_confirmed if pos.has(Role.POSITIONS) else self.positions_guessed).add(key)
        result = self.promote(pos, factor, node, frame, division=False)
        roles = {Role.ANGLES if kind == "rope" else Role.BIAS}
        # (an elementwise product broadcasts: its angles vary along the positions' axis)
        ndim, axis = _broadcast_axes(pos, factor) if op in ("*", "/", "mul") else (None, None)
        result = result.with_(roles=frozenset(roles), products=pos.products | factor.products | {key},
                              recent=frozenset({key}), relative=pos.relative if kind == "alibi" else None,
                              ndim=ndim, axis=axis, thin=pos.thin, is_complex=False, grids=pos.grids,
                              magnitude=_largest_angle(pos, factor))
        if pos.axes:
            self.facts.grid_axes[key] = max(self.facts.grid_axes.get(key, 1), pos.axes)
        # (an einsum that sums over an axis, like matmul, raises on a float32 and a 16-bit operand)
        one_dtype = op in ONE_DTYPE_PRODUCTS or op == "einsum" and isinstance(node, ast.Call) and _contracts(op, node)
        self._record(Product(node, op, kind, pos, pos_node, factor, factor_node, result, frame.site(), one_dtype),
                     ("product", key, pos, factor, frame.site()))
        return result

    def _note_operands(self, key: tuple, a: Value, a_node: ast.AST, b: Value, b_node: ast.AST, frame: Frame) -> None:
        """Tell the sinks what the product at ``key`` multiplies, to find its twins."""
        if {a.sort, b.sort} <= {Sort.TENSOR, Sort.OTHER}:
            # (one angle computed twice is computed in one function: products elsewhere are others)
            function = frame.function and id(frame.function.node)
            self.sinks.written_as(key, function, tuple(ast.dump(n) if isinstance(n, ast.AST) else None
                                                       for n in (a_node, b_node)))
            if a.origin is not None or b.origin is not None:
                self.sinks.same_operands(key, (function, operand_identity(a, a_node), operand_identity(b, b_node)))

    def _blended_frequencies(self, value: Value) -> bool:
        """Angles made only by products of frequencies and an operand of no role (not positions)."""
        return value.is_tensor and value.has(Role.ANGLES) and bool(value.recent & self.positions_guessed) and \
            not value.recent & self.positions_confirmed

    def _creation(self, node: ast.AST, value: Value, frame: Frame) -> Value:
        """Record a frequencies/slopes computation; the value remembers it, so that a rule can
        tell whether it ever meets positions."""
        value = value.with_(products=value.products | {node_key(node)})
        self._record(Creation(node, value, frame.site()), ("creation", node_key(node), value, frame.site()))
        return value

    # ---- calls -------------------------------------------------------------------------

    def _eval_Call(self, node: ast.Call, frame: Frame) -> Value:
        func = node.func
        args = [self.eval(a, frame) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, frame) for k in node.keywords if k.arg}
        qual = self.names.qualname(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
        # An autocast switched off is a value: ``ctx = torch.autocast(..., enabled=flag)``, then ``with ctx:``.
        if (qual or tail_name(func)).endswith("autocast"):
            evaluated = {id(n): v for n, v in zip(node.args, args)}
            evaluated.update((id(k.value), kwargs[k.arg]) for k in node.keywords if k.arg)
            if is_autocast_off_call(node, self.names, lambda n: evaluated.get(id(n)) or self.eval(n, frame)):
                return AUTOCAST_OFF
        if isinstance(func, ast.Attribute) and func.attr in MODULE_RETURNING_SELF \
                and self._rooted_in_loaded_model(func.value, frame):
            receiver = self.eval(func.value, frame)
            if isinstance(receiver.payload, _LoadedModel):
                # ``model.half()``, ``model.to(torch.bfloat16)``: converted in place, and returned
                source = self.facts.source(node)
                converted = _loaded_conversion(func.attr, [*args, *kwargs.values()],
                                               source if len(source) <= 60 else f".{func.attr}(...)",
                                               receiver.payload.converted)
                value = _loaded_model(converted)
                if isinstance(func.value, ast.Name):
                    frame.env[func.value.id] = value
                return value
        if isinstance(func, ast.Attribute) and func.attr == "append" and len(args) == 1 \
                and _is_module(args[0]) and is_self_attr(func.value) and frame.cls is not None:
            held = self.eval(func.value, frame)
            if held.sort is Sort.TUPLE and isinstance(held.payload, tuple) and held.payload_key == MODULE_LIST_KEY:
                # ``self.layers.append(Block(d))`` into an ``nn.ModuleList()``
                self.assign_attr(frame, func.value.attr, _module_list(held.payload + (args[0],)), func.value, None)
                return NONE_CONSTANT
        if not (qual and qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in TRANSFORMING):
            for value in list(args) + list(kwargs.values()):
                self._escape(value)
        # A tensor of one value filled or updated in place (``t_in.fill_(t)``) holds other values now.
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and func.attr not in VALUE_KEEPING | {"zero_"} \
                and isinstance(func.value, ast.Name) and _holds_one_value(frame.env.get(func.value.id, UNKNOWN)):
            frame.env[func.value.id] = frame.env[func.value.id].with_(payload_key=None)
        # Code we cannot read (a compiled extension) may fill a tensor it is handed in place:
        # zeros passed to ``ext.gen_position_ids(ids, ...)`` no longer hold one value.
        filled = [arg_node.id for arg_node, value in zip(node.args, args) if isinstance(arg_node, ast.Name)
                  and _holds_one_value(value) and frame.env.get(arg_node.id) is value]
        if filled and qual and qual.split(".", 1)[0] not in NOT_FIRST_PARTY and self._imported(qual) is None:
            for name in filled:
                frame.env[name] = frame.env[name].with_(payload_key=None)
        # A converted frequency buffer handed to such code (a fused rotary kernel) is used as rounded.
        handed = [(arg_node, value) for arg_node, value in zip(node.args, args) if frame.runtime
                  and value.prec is Prec.CONVERTED and value.has(Role.FREQS) and value.origin is not None]
        if handed and qual and qual not in LIBRARY and qual.split(".", 1)[0] not in NOT_FIRST_PARTY | _STDLIB \
                and self._imported(qual) is None:
            for arg_node, value in handed:
                self._record(Handoff(arg_node, qual, value), ("handoff", node_key(arg_node), value))
        for k in node.keywords:
            if k.arg is None:
                unpacked = self.eval(k.value, frame)
                if isinstance(unpacked.payload, _Keywords):  # forwarded: what the caller passed is known
                    kwargs.update((name, v) for name, v in unpacked.payload.members.items() if name not in kwargs)
                kwargs[UNPACKED_KEYWORDS] = UNKNOWN  # any parameter may be passed: none takes its default for sure
        for keyword in ("attn_mask", "attn_bias"):  # scaled_dot_product_attention, xformers: the bias as a mask
            if keyword in kwargs:
                self.sinks.reach_attention(kwargs[keyword])

        # The module API that holds tensors: register_buffer / register_parameter, and the
        # builtins setattr / getattr on the module itself (names may be computed: a family).
        # (called on the module, or unbound on a class with the module first: ``nn.Module.register_buffer(self, ...)``)
        unbound = int(bool(args) and self._is_own_instance(args[0], frame))
        if isinstance(func, ast.Attribute) and func.attr in MODULE_REGISTRATIONS and frame.cls is not None \
                and (unbound or self._is_own_instance(self.eval(func.value, frame), frame)):
            name_node, value_node = registration_parts(node, unbound)  # by position or by keyword
            name = self.attr_name(name_node, frame) if name_node is not None else None
            if name is not None:
                value = args[1 + unbound] if len(args) > 1 + unbound else \
                    kwargs.get("tensor", kwargs.get("param", UNKNOWN))
                storage = MODULE_REGISTRATIONS[func.attr]
                self.store_attr(frame, name, storage, value, node, value_node, name_node=name_node)
            return UNKNOWN
        if isinstance(func, ast.Attribute) and func.attr == "__setattr__" and frame.cls is not None \
                and len(args) == 2 + unbound and (unbound or self._is_own_instance(self.eval(func.value, frame), frame)) \
                and not (isinstance(func.value, ast.Name) and func.value.id == "object"
                         and self._is_builtin("object", frame)):
            # ``self.__setattr__(name, v)``, ``nn.Module.__setattr__(self, name, v)``: the module's own
            # assignment; ``object.__setattr__(self, name, v)`` bypasses it, leaving a plain attribute.
            name = self.attr_name(node.args[unbound], frame)
            if name is not None:
                self.assign_attr(frame, name, args[1 + unbound], node, node.args[1 + unbound],
                                 name_node=node.args[unbound])
            return UNKNOWN
        if isinstance(func, ast.Name) and func.id == "int" and self._is_builtin("int", frame) and args:
            # A Python int, whatever it converts (int(step / steps * 1000)); a literal length where
            # it folds (int(original_max_position_embeddings * factor)), as POS301 needs.
            number = _const_number(args[0]) if len(args) == 1 else None
            return Value(sort=Sort.PYINT, payload_key=("const", int(number)) if number is not None else None)
        if isinstance(func, ast.Name) and func.id in ("float", "max", "min") and self._is_builtin(func.id, frame) \
                and args and all(_const_number(a) is not None for a in args):
            # float(max_timescale), max(0, context - 1): literal numbers stay literal
            number = series_ops.folded_call(func.id, [_const_number(a) for a in args])
            return Value(sort=Sort.PYFLOAT if isinstance(number[1], float) else Sort.PYINT, payload_key=number) \
                if number else UNKNOWN
        if isinstance(func, ast.Name) and func.id in ("list", "tuple", "reversed") and self._is_builtin(func.id, frame) \
                and len(args) == 1 and (args[0].sort is Sort.TUPLE or _is_list_of(args[0])):
            return args[0]  # list(map(...)), tuple(xs): the same elements
        if isinstance(func, ast.Name) and func.id == "map" and self._is_builtin("map", frame) and len(args) == 2:
            # map(fn, xs): fn called on an element of xs, for each
            self._call_site = node
            element = self.call_value(args[0], [_element_of(args[1])], frame) or UNKNOWN
            return Value(sort=Sort.OTHER, roles=element.roles, prec=element.prec, payload=element,
                         payload_key=("list-of", element.sort.value, element.roles, element.products, element.recent))
        if isinstance(func, ast.Name) and func.id in ("enumerate", "zip") and self._is_builtin(func.id, frame) \
                and args:
            if func.id == "enumerate":
                return _pairs(Value(sort=Sort.PYINT), args[0])
            return _pairs(_element_of(args[0]), args[-1]) if len(args) == 2 else UNKNOWN
        if isinstance(func, ast.Attribute) and func.attr in ("get", "pop") and args and isinstance(node.args[0], ast.Constant):
            keywords = self.eval(func.value, frame).payload
            if isinstance(keywords, _Keywords) and node.args[0].value in keywords.members:
                return keywords.members[node.args[0].value]  # ``kwargs.get("rotary_emb")`` of a forwarded keyword
        if isinstance(func, ast.Attribute) and func.attr in MODULE_LOOKUPS and len(args) == 1 and frame.cls is not None \
                and self._is_own_instance(self.eval(func.value, frame), frame):
            name = self.attr_name(node.args[0], frame)  # ``self.get_buffer("inv_freq")``
            if name is not None and "." not in name:  # (a dotted path names a submodule's tensor)
                return self.read_attr(node, frame, name=name)
        if isinstance(func, ast.Name) and func.id == "getattr" and self._is_builtin("getattr", frame) \
                and len(args) >= 2 and args[0].sort is Sort.OTHER and not self._is_own_instance(args[0], frame) \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in LOAD_DTYPE_ATTRIBUTES:
            return self._load_dtype(node)  # ``getattr(config, "torch_dtype", None)``, as ``config.torch_dtype``
        if isinstance(func, ast.Name) and func.id in ("setattr", "getattr") and self._is_builtin(func.id, frame) \
                and len(args) >= 2 and self._is_own_instance(args[0], frame):
            name = self.attr_name(node.args[1], frame)
            if name is None:
                return UNKNOWN
            if func.id == "getattr":
                return self.read_attr(node, frame, name=name)
            if len(args) >= 3:
                self.assign_attr(frame, name, args[2], node, node.args[2], name_node=node.args[1])
            return UNKNOWN

        if isinstance(func, ast.Attribute) and func.attr in ("copy_", "index_copy_") and args:
            if is_self_attr(func.value) and frame.cls is not None:
                self.write_into_attr(frame, func.value, args[-1], node, node.args[-1])
                return UNKNOWN
            if isinstance(func.value, ast.Name) and func.value.id in frame.env:
                self.write_into_local(frame, func.value, args[-1], node, node.args[-1])
                return frame.env[func.value.id]
            receiver = self.eval(func.value, frame)
            if receiver.is_tensor:  # ``torch.empty(..., dtype=d)[..., :n].copy_(v)``: v, now in d
                written = _written_into(receiver, args[-1])
                # (v already in d: rounded where it was made, not where it is copied)
                return written.with_(origin=args[-1].origin) if args[-1].prec is receiver.prec and \
                    args[-1].origin is not None else written
        if isinstance(func, ast.Attribute) and func.attr == "mul_" and len(args) == 1 \
                and isinstance(func.value, ast.Name) and func.value.id in frame.env:
            # ``bias.mul_(slopes)``: the product, written into the receiver in its dtype
            receiver = frame.env[func.value.id]
            product = self.binop(ast.Mult(), receiver, args[0], node, func.value, node.args[0], frame)
            frame.env[func.value.id] = _written_into(receiver, product) if receiver.is_tensor else product
            return frame.env[func.value.id]
        if isinstance(func, ast.Attribute) and func.attr in IN_PLACE_ELEMENTWISE:
            # ``x.exp_()``: ``x.exp()``, written back into ``x``
            receiver = self.eval(func.value, frame)
            result = self.tensor_method(IN_PLACE_ELEMENTWISE[func.attr], receiver, node, args, kwargs, frame)
            if isinstance(func.value, ast.Name) and func.value.id in frame.env and receiver.is_tensor:
                frame.env[func.value.id] = result
            return result
        if isinstance(func, ast.Attribute) and func.attr in ("sin_", "cos_"):
            # ``table[:, 0::2].sin_()``: the table now holds cos/sin values where it held angles (the
            # interleaved sinusoid table fills both halves so), not angles to keep.
            view = func.value.value if isinstance(func.value, ast.Subscript) else func.value
            result = self.trig(node, self.eval(func.value, frame), frame, func.attr[:-1])
            if isinstance(view, ast.Name) and view.id in frame.env:
                table = frame.env[view.id]
                frame.env[view.id] = result.with_(ndim=table.ndim, axis=table.axis)
            return result
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert") and args and \
                is_self_attr(func.value) and frame.cls is not None and \
                self._attr_storage(frame.cls, func.value.attr) == "parameter":
            # ``self.tables.append(nn.Parameter(t))`` on an ``nn.ParameterList``: one more parameter
            added = _element_of(args[-1]) if func.attr == "extend" else args[-1]
            self.write_into_attr(frame, func.value, added.with_(payload_key=None), node, node.args[-1])
            return UNKNOWN
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert") and \
                isinstance(func.value, ast.Name) and func.value.id in frame.env and args:
            container = frame.env[func.value.id]
            if container.sort in (Sort.TUPLE, Sort.OTHER):
                frame.env[func.value.id] = _grown_list(container, args[-1], func.attr == "extend")
            return UNKNOWN

        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
                isinstance(func.value.func, ast.Name) and func.value.func.id == "super" and frame.cls:
            # ``super().m(...)``: the base's method, on the same ``self``.
            self._call_site = node
            for base in frame.cls.direct_bases():
                method = base.lookup_method(func.attr)
                if method:
                    return self.call(method, args, kwargs, frame.env.get("self"), frame)
        callee = self.eval(func, frame)
        if isinstance(callee.payload, Either):
            # one of several functions or modules, by path: each is called, their results joined
            return _joined([self._call_callee(member, node, args, kwargs, frame)
                            for member in callee.payload.members])
        return self._call_callee(callee, node, args, kwargs, frame)

    def _call_callee(self, callee: Value, node: ast.Call, args: List[Value], kwargs: Dict[str, Value],
                     frame: Frame) -> Value:
        """The call ``node`` of what ``callee`` holds, its arguments evaluated."""
        func = node.func
        self._call_site = node
        if isinstance(callee.payload, _Partial):
            bound = callee.payload
            if bound.args and not isinstance(bound.callee.payload, (FunctionInfo, tuple)):
                return UNKNOWN  # a torch function reads its positional arguments from the call's syntax
            if _rejected_by_partial(bound, len(args)):
                return UNKNOWN
            return self._call_callee(bound.callee, node, [*bound.args, *args], {**dict(bound.kwargs), **kwargs},
                                     frame)
        if callee.payload_key == ("qual", "functools.partial") and args:
            return _partial(args[0], args[1:], kwargs)
        called = self.call_value(callee, _spread(node, args), frame, kwargs)
        if called is not None:
            return self._grids_of_this_call(called, node, args, kwargs)
        if callee.sort is Sort.CALLABLE:
            payload = callee.payload
            if isinstance(payload, ClassInfo):
                return self._instance(payload, node, frame, args, kwargs)
            key = callee.payload_key
            if key == "builtin.range":  # (its counters lie below its end where the code fixes that)
                end = _const_int_value(args[1] if len(args) > 1 else args[0]) if args else None
                return Value(sort=Sort.OTHER, payload_key="range", extent=end if end and end > 0 else None)
            if isinstance(key, tuple) and key[0] == "library":
                return self.library_call(key[1], node, args, kwargs, frame)
            if isinstance(key, tuple) and key[0] == "qual":
                return self.torch_function(key[1], node, args, kwargs, frame, callee)
        if isinstance(callee.payload, _MethodOf):
            return self.tensor_method(callee.payload.name, callee.payload.owner, node, args, kwargs, frame)
        if isinstance(callee.payload, _ReturnsModule):
            return callee.payload.module
        if isinstance(func, ast.Name) and func.id == "super":
            return Value(sort=Sort.OTHER)
        return UNKNOWN

    def _grids_of_this_call(self, result: Value, node: ast.Call, args: Sequence[Value],
                            kwargs: Dict[str, Value]) -> Value:
        """``result`` with the position grids the call made itself (none of its arguments holds
        them) told apart by the call site: a 1-D sincos helper called once per axis (``pe(W)``,
        ``pe(H)``) makes two grids, whose tables side by side are a 2-axis grid."""
        handed = frozenset().union(*(value.grids for value in (*args, *kwargs.values())))
        return _retagged_grids(result, handed, node_key(node), self.grid_ends)

    def _instance(self, cls: ClassInfo, call: ast.Call, frame: Frame, args: Sequence[Value] = (),
                  kwargs: Optional[Dict[str, Value]] = None) -> Value:
        """The module ``cls(...)`` builds. It carries the literals the call passes to its
        constructor (``SineEmbedding(128, normalize=True)``) or leaves to their defaults, and the
        modules it is handed (``Attention(dim, rotary=RotaryEmbedding(32))``), so that what the
        instance holds in an attribute the constructor sets from such a parameter is known to its
        methods."""
        init = cls.lookup_method("__init__")
        if init is None and cls.record_fields:
            # a record's generated constructor: each argument, whatever it is, in its field
            fields = dict(zip(cls.record_fields, args))
            fields.update((name, value) for name, value in (kwargs or {}).items() if name in cls.record_fields)
            return Value(sort=Sort.INSTANCE, payload=cls,
                         payload_key=(cls.name, tuple(sorted(fields.items(), key=lambda pair: pair[0]))))
        bound = bound_arguments(init.node, call, with_defaults=True) \
            if init is not None and not isinstance(init.node, ast.Lambda) else None
        given = {id(node): value for node, value in zip(call.args, args)}
        given.update((id(k.value), (kwargs or {})[k.arg]) for k in call.keywords if k.arg in (kwargs or {}))
        held = {name: given[id(arg)] for name, arg in (bound or {}).items()
                if id(arg) in given and _is_module(given[id(arg)])}
        literals = tuple(sorted(((name, held[name] if name in held else self.eval(arg, frame))
                                 for name, arg in (bound or {}).items() if _is_literal(arg) or name in held),
                                key=lambda pair: pair[0]))
        return Value(sort=Sort.INSTANCE, payload=cls, payload_key=(cls.name, literals) if literals else cls.name)

    def _constructed_with(self, instance: Optional[Value], cls: ClassInfo, attr: str, frame: Frame) -> Optional[Value]:
        """The literal or module ``instance`` was built with for the constructor parameter that
        ``attr`` holds; or, for a module the constructor builds there from such a parameter
        (``self.attn = Attention(dim, rotary=rotary)``), that module as built with it."""
        key = instance.payload_key if instance is not None and instance.sort is Sort.INSTANCE else None
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], tuple)):
            return None
        init = cls.lookup_method("__init__")
        if init is None:
            return None
        passed = dict(key[1])
        param = parameter_attrs(init).get(attr)
        if param is not None:
            return passed.get(param)
        call = built_from_parameters(init).get(attr)
        if call is None or init.home is not self:
            return None
        handed = {name: value for name, value in passed.items() if _is_module(value)}
        args = [handed.get(arg.id, UNKNOWN) if isinstance(arg, ast.Name) else UNKNOWN for arg in call.args]
        kwargs = {k.arg: handed[k.value.id] for k in call.keywords
                  if k.arg is not None and isinstance(k.value, ast.Name) and k.value.id in handed}
        if not kwargs and all(arg is UNKNOWN for arg in args):
            return None
        built = self._project_class_of(call.func)
        return self._instance(built, call, frame, args, kwargs) if built is not None else None

    def call_value(self, callee: Value, args: Sequence[Value], frame: Frame,
                   kwargs: Optional[Dict[str, Value]] = None) -> Optional[Value]:
        """Calls what ``callee`` holds when it is code of the project: a function or lambda, a
        bound method, or a module instance (its ``forward``); None for anything else."""
        payload, kwargs = callee.payload, kwargs or {}
        if isinstance(payload, _Partial):  # ``map(partial(fn, offset=o), xs)``
            if _rejected_by_partial(payload, len(args)):
                return UNKNOWN
            return self.call_value(payload.callee, [*payload.args, *args], frame, {**dict(payload.kwargs), **kwargs})
        if isinstance(payload, Either):
            results = [self.call_value(member, args, frame, kwargs) for member in payload.members]
            return _joined([r for r in results if r is not None]) if any(r is not None for r in results) else None
        if callee.sort is Sort.CALLABLE and isinstance(payload, FunctionInfo):
            return self.call(payload, args, kwargs, None, frame)
        site = self._call_site.func if isinstance(self._call_site, ast.Call) else None
        if callee.sort is Sort.CALLABLE and isinstance(payload, tuple) and len(payload) == 2 \
                and isinstance(payload[0], FunctionInfo):
            handed = _stored_on_part(frame.env, site.value) if isinstance(site, ast.Attribute) else None
            return self.call(payload[0], args, kwargs, payload[1], frame, handed=handed)
        if callee.sort is Sort.INSTANCE and isinstance(payload, ClassInfo):
            rebound = payload.lookup_attr("forward")
            if rebound is not None and rebound[1].sort is Sort.CALLABLE:
                # ``self.forward = self.forward_ckpt`` at construction: the instance's own
                # attribute shadows the class's method, and calling the module runs it
                return self.call_value(rebound[1], args, frame, kwargs)
            forward = payload.lookup_method("forward")
            if forward is not None:
                cast_to = payload.inputs_cast_to()
                if cast_to is not None and frame.runtime and isinstance(self._call_site, ast.Call):
                    args, kwargs = self._sharded_entry(self._call_site, payload, forward, cast_to, args, kwargs)
                return self.call(forward, args, kwargs, callee, frame, handed=_stored_on_part(frame.env, site))
            dunder_call = payload.lookup_method("__call__")
            if dunder_call is not None:  # an object of a plain class that defines how it is called
                return self.call(dunder_call, args, kwargs, callee, frame, handed=_stored_on_part(frame.env, site))
        if isinstance(payload, _LinearModule) and args and frame.runtime and isinstance(self._call_site, ast.Call) \
                and self._call_site.args:
            return self._linear_call(self._call_site, args[0], payload, frame)
        if isinstance(payload, _LibraryHelper) and isinstance(self._call_site, ast.Call):
            summary = LIBRARY[payload.qual]
            return self.library_call(summary.effect, self._call_site, list(args), kwargs, frame, summary.time_position)
        if callee.payload_key == VALUE_PRESERVING.payload_key and len(args) == 1 and not kwargs:
            return args[0]
        if isinstance(payload, _LibrarySeqPos) and isinstance(self._call_site, ast.Call):
            return self._library_positions(self._call_site, args, kwargs, frame)
        if isinstance(payload, _LibraryRotary) and args and isinstance(self._call_site, ast.Call):
            return self._library_rotation(self._call_site, payload, args[0], frame)
        if isinstance(payload, _TransformersRotary) and isinstance(self._call_site, ast.Call):
            return self._transformers_rotation(self._call_site, payload, args, kwargs, frame)
        if isinstance(payload, _FlashRotary) and isinstance(self._call_site, ast.Call):
            return self._flash_rotation(self._call_site, payload, frame)
        if isinstance(payload, _TimestepEmbedder) and isinstance(self._call_site, ast.Call):
            call = self._call_site
            if payload.keywords:
                timesteps = [(kwargs[k.arg], k.value) for k in call.keywords if k.arg in payload.keywords
                             and k.arg in kwargs]
                unpacked = next((k.value for k in call.keywords if k.arg is None), None)
                if unpacked is not None:  # ``model(**kwargs)`` of a dict whose entries are known
                    named = {k.arg for k in call.keywords}
                    timesteps += [(kwargs[name], unpacked) for name in payload.keywords
                                  if name in kwargs and name not in named]
                at = payload.position
                if at is not None and at < len(call.args) and at < len(args) \
                        and not any(isinstance(a, ast.Starred) for a in call.args[:at + 1]):
                    timesteps.append((args[at], call.args[at]))
            else:
                timesteps = list(zip(args[:-1] if payload.all_but_last else args[:1], call.args))
            self._embed_timesteps(call, timesteps, frame)
            return UNKNOWN_TENSOR
        if isinstance(payload, _Chain) and args:
            value = args[0]
            for module in payload.modules:
                value = self.call_value(module, [value], frame) or UNKNOWN_TENSOR
            return value
        return None

    @staticmethod
    def _sharded_entry(call: ast.Call, cls: ClassInfo, forward: FunctionInfo, dtype: str, args: Sequence[Value],
                       kwargs: Dict[str, Value]) -> Tuple[List[Value], Dict[str, Value]]:
        """The arguments as the forward of a module FSDP2 shards with a mixed-precision policy gets
        them: each floating tensor cast to the policy's param dtype (``cast_forward_inputs``)."""
        spec = forward.node.args
        names = [a.arg for a in (*spec.posonlyargs, *spec.args)][1:]
        starred = any(isinstance(a, ast.Starred) for a in call.args)

        def entered(value: Value, node: ast.AST, name: str) -> Value:
            if not value.is_tensor or value.is_complex or value.prec not in (Prec.F32, Prec.F64, Prec.DEFAULT):
                return value
            target = "the policy's param_dtype" if dtype == "param_dtype" else dtype
            reason = f"the argument '{name}', which FSDP2's MixedPrecisionPolicy casts to {target} " \
                     f"where {cls.name}.forward begins"
            return value.with_(prec=Prec.LOW, origin=Origin.at(node, reason, Prec.LOW, relative=value.relative,
                                                                float16=dtype == "float16", entry=True))

        positional = [entered(value, call.args[i], names[i] if i < len(names) else f"#{i + 1}")
                      if not starred and i < len(call.args) else value for i, value in enumerate(args)]
        nodes = {k.arg: k.value for k in call.keywords if k.arg is not None}
        named = {name: entered(value, nodes[name], name) if name in nodes else value for name, value in kwargs.items()}
        return positional, named

    def _random_fill(self, target: Optional[ast.AST], filled: Value, uniform: bool, frame: Frame,
                     bounds: Dict[str, object]) -> Value:
        """A tensor filled in place with a random draw: no positions and no frequencies. A module's
        own tensor so filled (``nn.init.normal_(self.weight)``, ``self.weight.normal_()``) holds
        that draw from then on."""
        drawn = filled.with_(sort=Sort.TENSOR, roles=frozenset(), payload_key=None,
                             products=filled.products | {RANDOM_DRAW} | ({UNIFORM_DRAW} if uniform else set()), **bounds)
        if target is not None and is_self_attr(target) and frame.cls is not None:
            storage = self._attr_storage(frame.cls, target.attr)
            if storage is not None:
                self.store_attr(frame, target.attr, storage, drawn, target, None, written=True)
        return drawn

    def _library_rotation(self, call: ast.Call, rotary: _LibraryRotary, operand: Value, frame: Frame) -> Value:
        """A library rotary module (``rotary-module``) at ``call``: its method rotates ``operand`` by
        positions made in ``operand``'s dtype; called itself, ``operand`` is the positions. Either
        way the positions are cast to its frequencies' dtype, a parameter ``model.to()`` converts, for
        a product under autocast switched off."""
        method = rotary.method
        mapped = isinstance(call.func, ast.Name) and call.func.id == "map" and len(call.args) == 2
        # (``map(rotary.rotate_queries_or_keys, (q, k))``: the method is mapped over the tensors)
        function, operand_node = (call.args[0], call.args[1]) if mapped else (call.func, call.args[0] if call.args
                                                                               else call)
        src = self.facts.source(operand_node)
        marker = Value(recent=frozenset({node_key(call)}))
        self._mark_rotary(marker, "cos")  # (the library takes both of the angles it makes)
        self._mark_rotary(marker, "sin")
        owner = function.value if (method is not None or getattr(function, "attr", None) == "forward") \
            and isinstance(function, ast.Attribute) else function
        held_as = rotary.owner if rotary.owner is not None else self.facts.source(owner)
        reason = "parameter 'freqs'" if held_as == "self" else f"parameter '{held_as.removeprefix('self.')}.freqs'"
        freqs = tensor(Prec.CONVERTED, Origin.at(owner, reason, Prec.CONVERTED), roles=frozenset({Role.FREQS}))
        if method is None:
            if LAYER_OUTPUT in operand.products:
                return UNKNOWN_TENSOR  # a layer's features handed where positions go: no positions to round
            positions = operand
        else:
            made_in = self.dtype_of(operand, operand_node, frame).prec if call.args else Prec.UNKNOWN
            origin = Origin.at(call, f"the dtype of '{src}' (the library makes its positions in the rotated "
                                     f"tensor's dtype)", made_in)
            positions = tensor(made_in, origin, roles=frozenset({Role.POSITIONS}))
        one_exact_value = _filled_only(positions) and positions.extent is not None \
            and series_ops.bf16(positions.extent - 1) == positions.extent - 1  # (``full(n, 8192)``)
        if positions.is_tensor and positions.prec in (Prec.INT, Prec.F32, Prec.F64) and not one_exact_value:
            # (``t.type(freqs.dtype)`` in its forward: exact positions take the converted parameter's dtype)
            target = dtype_value(Prec.CONVERTED, Origin.at(
                call, f"the dtype of {reason} (the library casts its positions to it)", Prec.CONVERTED))
            positions = self.cast(positions, target, call, call, frame, record=False)
            positions = positions.with_(roles=positions.roles | {Role.POSITIONS})
        inner = Frame(frame.function, frame.env, frame.runtime, True, frame.default)
        angles = self.product(call, "einsum", positions, operand_node, freqs, owner, inner)
        if angles is None:
            return UNKNOWN_TENSOR
        return Value(sort=Sort.TENSOR, prec=operand.prec, origin=operand.origin) if method is not None else angles

    def _transformers_rotation(self, call: ast.Call, rotary: _TransformersRotary, args: Sequence[Value],
                               kwargs: Dict[str, Value], frame: Frame) -> Value:
        """``rotary(x, position_ids)`` of one of transformers' rotary modules: the float32 positions
        times its ``inv_freq`` buffer upcast with ``.float()`` (which a conversion of the module that
        holds it has rounded by forward, unless a keep-in-float32 list or a float32 conversion of
        the project keeps it), into cos and sin returned in ``x``'s dtype. Called with a length
        (``rotary(x, seq_len=n)``, 4.37's cached tables), nothing is known."""
        positions = kwargs.get("position_ids", args[1] if len(args) > 1 else None)
        if positions is None or not positions.is_tensor:
            return UNKNOWN
        reason = "buffer 'inv_freq' of transformers' rotary module"
        upcast = Origin.at(call, f"the float32 upcast of {reason}", Prec.F32)
        kept = self.model.kept_float32_imports.get(rotary.qual, set()) & {ALL_ATTRS, "inv_freq"}
        rounded = Origin.at(call, reason, Prec.CONVERTED) \
            if frame.runtime and not frame.at_construction and not kept else None
        freqs = tensor(Prec.F32, upcast, rounded=rounded, roles=frozenset({Role.FREQS}))
        target = dtype_value(Prec.F32, Origin.at(call, "float32 (the library's .float())", Prec.F32))
        positions = self.cast(positions, target, call, call, frame, record=False)
        positions = positions.with_(roles=positions.roles | {Role.POSITIONS})
        marker = Value(recent=frozenset({node_key(call)}))
        self._mark_rotary(marker, "cos")
        self._mark_rotary(marker, "sin")
        inner = Frame(frame.function, frame.env, frame.runtime, True, frame.default)
        positions_node = next((k.value for k in call.keywords if k.arg == "position_ids"),
                              call.args[1] if len(call.args) > 1 else call)
        if self.product(call, "*", positions, positions_node, freqs, call.func, inner) is None:
            return UNKNOWN
        activations = args[0] if args else UNKNOWN
        table = Value(sort=Sort.TENSOR, prec=activations.prec, origin=activations.origin) if activations.is_tensor \
            else UNKNOWN_TENSOR
        return Value(sort=Sort.TUPLE, payload=(table, table), payload_key=(table, table))

    def _flash_rotation(self, call: ast.Call, rotary: _FlashRotary, frame: Frame) -> Value:
        """A call of flash-attention's rotary module built with ``pos_idx_in_fp32=False``: in
        forward, its cache takes positions made in the dtype of its ``inv_freq`` buffer times that
        buffer, both as a conversion of the model left them."""
        if not frame.runtime or frame.at_construction:
            return UNKNOWN
        made_in = "the dtype of the library rotary's inv_freq buffer (pos_idx_in_fp32=False)"
        positions = tensor(Prec.CONVERTED, Origin.at(rotary.flag, made_in, Prec.CONVERTED, cast=True),
                           roles=frozenset({Role.POSITIONS}))
        freqs = tensor(Prec.CONVERTED, Origin.at(call, "buffer 'inv_freq' of the library's rotary module",
                                                 Prec.CONVERTED), roles=frozenset({Role.FREQS}))
        marker = Value(recent=frozenset({node_key(call)}))
        self._mark_rotary(marker, "cos")
        self._mark_rotary(marker, "sin")
        self.product(call, "outer", positions, rotary.flag, freqs, call.func, frame)
        return UNKNOWN

    def _transformers_rotary_buffer(self, node: ast.Attribute, rotary: _TransformersRotary, frame: Frame) -> Value:
        """``rotary.inv_freq`` of one of transformers' rotary modules that a module here holds: a
        float32 frequency buffer, which a conversion of the holder has rounded by forward (unless
        a keep-in-float32 list keeps it)."""
        reason = f"buffer '{node.attr}' of transformers' rotary module"
        kept = self.model.kept_float32_imports.get(rotary.qual, set()) & {ALL_ATTRS, node.attr}
        if frame.runtime and not frame.at_construction and not kept:
            return tensor(Prec.CONVERTED, Origin.at(node, reason, Prec.CONVERTED), roles=frozenset({Role.FREQS}))
        return tensor(Prec.F32, Origin.at(node, reason, Prec.F32), roles=frozenset({Role.FREQS}))

    def _rooted_in_loaded_model(self, node: ast.AST, frame: Frame) -> bool:
        """Whether ``node`` names a model loaded here or a part of one (before evaluating it):
        a local bound to one, or a loader's call, under attributes, indexing and method calls."""
        while isinstance(node, (ast.Attribute, ast.Subscript)) or \
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr not in TRANSFORMERS_LOADERS:
            node = node.func.value if isinstance(node, ast.Call) else node.value
        if isinstance(node, ast.Name):
            return isinstance(frame.env.get(node.id, UNKNOWN).payload, _LoadedModel)
        qual = self.names.qualname(node.func) if isinstance(node, ast.Call) \
            and isinstance(node.func, (ast.Name, ast.Attribute)) else None
        return bool(qual) and qual.startswith("transformers.") and qual.rsplit(".", 1)[-1] in TRANSFORMERS_LOADERS

    def _loaded_part(self, model: _LoadedModel, node: ast.Attribute) -> Value:
        """An attribute of a model loaded here: a rotary module's frequency buffer, float32 unless
        the model was converted here; any other part of the model, as a part of it."""
        if node.attr not in LOADED_ROTARY_BUFFERS:
            return _loaded_model(model.converted)
        if model.converted is None:
            return tensor(Prec.F32, Origin.at(node, f"buffer '{node.attr}' of a transformers model loaded here "
                                                    f"(float32 at load)", Prec.F32), roles=frozenset({Role.FREQS}))
        return tensor(Prec.CONVERTED, Origin.at(node, f"buffer '{node.attr}' of a transformers model converted "
                                                      f"by {model.converted}", Prec.CONVERTED),
                      roles=frozenset({Role.FREQS}))

    def _layer_parameter(self, node: ast.Attribute, frame: Frame) -> Value:
        """``layer.weight`` of a torch layer built here: a parameter drawn at random, in the default
        dtype at construction, converted with the module that holds the layer by forward."""
        reason = f"parameter '{self.facts.source(node).removeprefix('self.')}'"
        if frame.runtime and not frame.at_construction:
            held = tensor(Prec.CONVERTED, Origin.at(node, reason, Prec.CONVERTED))
        else:
            held = self.default_tensor(node, frame, reason)
        return held.with_(products=frozenset({RANDOM_DRAW}), payload_key=LAYER_PARAMETER)

    def _embed_timesteps(self, call: ast.Call, timesteps: Sequence[Tuple[Value, ast.AST]], frame: Frame) -> None:
        """A library's sinusoidal embedding of each of ``timesteps`` (diffusers' ``Timesteps``; the
        value and the node that passes it): each, upcast inside, times float32 frequencies into cos
        and sin, an angle product at ``call`` (one per argument, at the argument's node)."""
        for value, arg_node in timesteps:
            if not (value.is_tensor or _is_opaque(value)):
                continue
            key = node_key(arg_node)
            marker = Value(recent=frozenset({key}))
            self._mark_rotary(marker, "cos")  # (the library takes both: a rotation's angles)
            self._mark_rotary(marker, "sin")
            freqs = tensor(Prec.F32, Origin.at(call, "a library's float32 timestep frequencies", Prec.F32),
                           roles=frozenset({Role.FREQS}))
            self.product(arg_node, "*", value, arg_node, freqs, call, frame)

    def _linear_call(self, call: ast.Call, x: Value, layer: _LinearModule, frame: Frame) -> Value:
        """``self.proj(x)`` of an ``nn.Linear`` in forward: ``x`` times its weight, a parameter that
        ``module.to()`` has converted and that was drawn at random (or the table the module
        assigned over it). An angle product where it projects a few coordinates (learned Fourier
        features, a time encoder)."""
        reason = f"parameter '{self.facts.source(call.func).removeprefix('self.')}.weight'"
        weight = tensor(Prec.CONVERTED, Origin.at(call.func, reason, Prec.CONVERTED),
                        products=frozenset({RANDOM_DRAW}), ndim=2)
        if layer.weight is not None:
            weight = weight.with_(roles=layer.weight.roles, products=layer.weight.products,
                                  magnitude=layer.weight.magnitude, interval=layer.weight.interval)
        in_features = layer.in_features
        coordinates = in_features is not None and in_features <= MOST_COORDINATES
        product = coordinates and self.product(call, "linear", x, call.args[0], weight, call.func, frame)
        if product:
            return product
        prec = self.promote(x, weight, call, frame, division=False).prec
        if prec in (Prec.CONVERTED, Prec.ACTIVATION):
            # A layer's output is an activation: 16-bit after a conversion and under autocast alike.
            source = self.facts.source(call)
            origin = Origin.at(call, f"the activation dtype ({source if len(source) <= 40 else 'a layer output'})",
                               Prec.ACTIVATION)
            return tensor(Prec.ACTIVATION, origin, recent=self._trace(call, x, weight), products=frozenset({LAYER_OUTPUT}))
        return tensor(prec, recent=self._trace(call, x, weight), products=frozenset({LAYER_OUTPUT}))

    def _dtype_arg(self, kwargs: Dict[str, Value], node: Optional[ast.Call] = None) -> Optional[Value]:
        """The ``dtype=`` argument as a dtype value; None when absent or ``None``."""
        value = kwargs.get("dtype")
        if value is None or value.payload_key == ("const", None):
            return None
        if value.sort is Sort.DTYPE:
            return value
        keyword = next((k for k in node.keywords if k.arg == "dtype"), None) if node is not None else None
        if keyword is not None and isinstance(keyword.value, ast.Name) and keyword.value.id in PYTHON_TYPE_DTYPES \
                and self.names.qualname(keyword.value) in (None, keyword.value.id, f"builtins.{keyword.value.id}"):
            # ``dtype=float``: torch takes Python's float for float64 (and int for int64)
            name = keyword.value.id
            spelled = "torch.float64" if name == "float" else "torch.int64"
            return dtype_value(PYTHON_TYPE_DTYPES[name], Origin.at(keyword.value, f"explicit {name} ({spelled})"))
        if _is_parameter(value) and keyword is not None:
            # A dtype argument that no caller here shows: the model's dtype.
            src = self.facts.source(keyword.value)
            return _callers_dtype(keyword.value, src)
        return dtype_value(Prec.UNKNOWN)

    def torch_function(self, qual: str, node: ast.Call, args: List[Value], kwargs: Dict[str, Value],
                       frame: Frame, callee: Value) -> Value:
        value = self._torch_function(qual, node, args, kwargs, frame, callee)
        name = qual.rpartition(".")[2]
        if name in FACTORIES and qual.startswith("torch"):
            # torch.tensor(t) copies t where it is
            data = [a for a in args[:1] if name in ("tensor", "as_tensor") and (a.is_tensor or _is_opaque(a))]
            literal = _on_cpu_device(node, self.names.qualname) or _cpu_device_of(args, kwargs, literal=True)
            return _placed(value, (), cpu=literal or _cpu_device_of(args, kwargs) or "device" not in kwargs
                           and self.factories_on_cpu and all(a.on_cpu for a in data), literal=literal)
        if name in LIKE or name in NEW_TENSOR_METHODS:  # where the tensor it copies is, unless told
            return _placed(value, args[:1], cpu=False if "device" in kwargs else None)
        return _placed(value, list(args) + list(kwargs.values()))

    def _torch_function(self, qual: str, node: ast.Call, args: List[Value], kwargs: Dict[str, Value],
                        frame: Frame, callee: Value) -> Value:
        module, _, name = qual.rpartition(".")
        if module.split(".", 1)[0] == "numpy" and (name in INVERSE_TRIG or module == "numpy.random"):
            return Value(sort=Sort.OTHER, products=frozenset({PHASE if name in INVERSE_TRIG else RANDOM_DRAW}))
        if module == "numpy" and name == "linspace" and len(args) >= 3:
            # numpy's evenly spaced grid, float64 unless its dtype says otherwise, which
            # ``torch.from_numpy`` hands to torch as it is (a time encoder's exponents)
            given = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            prec = NUMPY_FLOAT_PRECS.get(self.names.qualname(given) or "", Prec.UNKNOWN) if given is not None \
                else Prec.F64
            grid = self._creation_value(node, name, args[:3], {}, frame, None, "numpy.linspace(...)")
            return grid.with_(prec=prec, origin=Origin.at(node, "numpy.linspace(...)", prec))
        if module in ("math", "numpy", "np"):
            if name == "pow" and module == "math" and len(node.args) == 2 and not node.keywords \
                    and not any(isinstance(a, ast.Starred) for a in node.args):
                # ``math.pow(base, 2 * (i // 2) / d)``: a power as ``base ** x`` is
                return self.binop(ast.Pow(), args[0], args[1], node, node.args[0], node.args[1], frame)
            if name in ("log", "log2", "log10", "sqrt", "exp", "pow", "floor", "ceil"):
                roles = frozenset({Role.POW2}) if name == "pow" and args and args[0].payload_key in (
                    ("const", 2), ("const", 2.0)) else frozenset({Role.LOGARITHM}) if name.startswith("log") \
                    else frozenset()
                return Value(sort=Sort.PYFLOAT if name not in ("floor", "ceil") else Sort.PYINT, roles=roles,
                             payload_key=series_ops.folded_call(name, [_const_number(a) for a in args]))
            return UNKNOWN
        if qual in INIT_RANDOM_FILLS:
            # ``nn.init.trunc_normal_(self.weight, std=s)``: the tensor now holds a random draw,
            # whatever it held (an empty allocation, zeros)
            uniform = qual in UNIFORM_INIT_FILLS
            return self._random_fill(node.args[0] if node.args else None, args[0] if args else UNKNOWN, uniform,
                                     frame, _uniform_bounds(args[1:], kwargs) if uniform else dict(magnitude=None, interval=None))
        if qual == "torch.normal":
            # ``torch.normal(0.0, s, size)``: a draw, in the mean's dtype or the default one
            mean = args[0] if args else kwargs.get("mean", UNKNOWN)
            drawn = mean if mean.is_tensor else self._creation_value(
                node, name, args[2:], kwargs, frame, roles_from=None, default_reason="torch.normal(...) without dtype")
            return drawn.with_(roles=frozenset(), payload_key=None, products=drawn.products | {RANDOM_DRAW})
        if qual in LINEAR_MODULES:
            width = _const_number(args[0] if args else kwargs.get("in_features", UNKNOWN))
            return _linear_module(width if isinstance(width, int) else None)
        if qual in LAYER_PARAMETERS:
            return Value(sort=Sort.CALLABLE, payload=_TorchLayer(qual), payload_key=("torch layer", qual))
        if qual in VALUE_PRESERVING_MODULES:
            return VALUE_PRESERVING
        if qual in MODULE_LISTS:
            held = args[0] if args else _module_list(())
            if held.sort is Sort.TUPLE and isinstance(held.payload, tuple):
                return _module_list(held.payload)
            return held if _is_list_of(held) else UNKNOWN
        if qual in MODULE_DICTS:
            held = args[0] if args else _modules_by_name({})
            return held if isinstance(held.payload, _ModulesByName) else UNKNOWN
        if qual in PARAMETER_CONTAINERS:
            # ``nn.ParameterList([...])``, ``nn.ParameterDict({...})``: parameters, held as one
            # (their elements merged), that iteration, indexing and ``append`` reach
            given = node.args[0] if node.args else None
            elements = [self.eval(v, frame) for v in given.values] if isinstance(given, ast.Dict) \
                else [_element_of(args[0])] if args else []
            held = merge_all([e for e in elements if e.is_tensor]) if any(e.is_tensor for e in elements) \
                else UNKNOWN_TENSOR
            return held.with_(sort=Sort.TENSOR, payload_key=PARAMETERS_HELD, payload=None)
        if qual in SEQUENTIAL_CONTAINERS and not kwargs:
            modules = tuple(args)
            if any(m.sort is Sort.INSTANCE for m in modules):
                return Value(sort=Sort.CALLABLE, payload=_Chain(modules),
                             payload_key=("sequential",) + tuple(m.payload_key for m in modules))
            return UNKNOWN
        if qual.startswith("transformers.") and name in TRANSFORMERS_LOADERS:
            return _loaded_model()
        if qual in LIBRARY:
            return self.library_call(LIBRARY[qual].effect, node, args, kwargs, frame, LIBRARY[qual].time_position)
        if not qual.startswith("torch") and not qual.startswith("einops"):  # einops.einsum is torch's
            return UNKNOWN
        if name in ("set_default_dtype", "set_default_tensor_type") and args:
            target = args[0]
            if target.sort is Sort.CALLABLE and target.origin:  # torch.cuda.HalfTensor
                frame.default = dtype_value(target.prec, target.origin)
            elif target.sort is Sort.DTYPE:
                frame.default = target
            elif target.payload_key and isinstance(target.payload_key, tuple) and \
                    isinstance(target.payload_key[1], str):
                tail = target.payload_key[1].rsplit(".", 1)[-1]
                if tail in TENSOR_TYPES:
                    frame.default = dtype_value(TENSOR_TYPES[tail], Origin.at(node, f"'{target.payload_key[1]}'"))
            return UNKNOWN
        if name == "promote_types" and len(args) == 2:
            return _promoted_dtype(args[0], args[1], node)
        if name == "get_default_dtype":
            if frame.default.origin is None:  # say where the dtype came from in the message
                return dtype_value(frame.default.prec, Origin.at(node, "the default dtype (torch.get_default_dtype())",
                                                                 frame.default.prec))
            return frame.default
        if name in ("Parameter", "Buffer") and module in ("torch.nn", "torch.nn.parameter"):
            base = args[0] if args else kwargs.get("data", UNKNOWN)
            grad = kwargs.get("requires_grad", args[1] if len(args) > 1 else UNKNOWN)
            if name == "Parameter" and grad == FALSE_CONSTANT:
                base = base.with_(products=base.products | {FROZEN_PARAMETER})
            elif name == "Parameter":
                base = base.with_(dyadic=False)  # training moves it off the powers of two it starts at
            # What it is filled with (zeros a checkpoint or an optimiser replaces) outlives the wrapper,
            # as it does for register_buffer.
            return base.with_(sort=Sort.TENSOR, payload_key=name.lower(),
                              payload=base.payload_key if _holds_one_value(base) else None)
        if name == "Tensor" and args:  # legacy constructor: default tensor type
            return self._creation_value(node, name, args, kwargs, frame, roles_from=args[0],
                                        default_reason="torch.Tensor(...) uses the default dtype")
        if name in TENSOR_TYPES:
            return tensor(TENSOR_TYPES[name], Origin.at(node, f"explicit {qual}"),
                          roles=args[0].roles if args else frozenset(), dyadic=bool(args) and _dyadic_data(args[0]))
        if name in ("arange", "range"):
            return self._arange(node, args, kwargs, frame)
        if name in ("tensor", "as_tensor", "from_numpy"):
            data = args[0] if args else UNKNOWN
            dtype = self._dtype_arg(kwargs, node)
            if dtype is not None:
                numbers = _literal_numbers(data)
                made = self.cast(data.with_(sort=Sort.TENSOR, series=series_ops.literal(numbers)), dtype, node, node,
                                 frame)
                if numbers and made.origin is not None and made.origin.node is node and \
                        all(series_ops.bf16(v) == v and series_ops.fp16(v) == v for v in numbers):
                    # tensor([6016.0], dtype=x.dtype): numbers that every 16-bit dtype holds, as they are
                    made = made.with_(origin=replace(made.origin, exact=True))
                return made
            if data.is_tensor:
                return data
            if data.has(Role.LOGARITHM) and _const_number(data) is None:
                # ``torch.tensor(np.log(scale))``: logarithms of data (a mixture's scales), whose exp is
                # that data again, not the exponents of a geometric table
                data = data.with_(roles=data.roles - {Role.LOGARITHM})
            if data.sort is Sort.PYINT:
                return tensor(Prec.INT, roles=data.roles)
            if data.sort is Sort.PYFLOAT or data.prec in (Prec.UNKNOWN,) and data.roles:
                made = self.default_tensor(node, frame, "torch.tensor(...) of Python floats").with_(
                    roles=data.roles, ndim=0 if data.sort is Sort.PYFLOAT else None, dyadic=_dyadic_data(data))
                # a table of powers written as a list (``[math.pow(b, 2 * (i // 2) / d) for i in ...]``)
                # is made here, in the default dtype
                return self._creation(node, made, frame) if data.sort is not Sort.PYFLOAT and \
                    data.roles & {Role.FREQS, Role.GROWTH} else made
            return tensor(Prec.UNKNOWN, roles=data.roles, products=data.products & (NOT_POSITIONAL | {MODULE_CONSTANT}),
                          dyadic=_dyadic_data(data))
        if name == "logspace":
            base = kwargs.get("base", args[3] if len(args) > 3 else UNKNOWN)
            value = self._creation_value(node, name, args, kwargs, frame, roles_from=None,
                                         default_reason="torch.logspace(...) without dtype")
            value = value.with_(roles=frozenset({Role.SLOPES if is_pow2_base(base) else Role.FREQS}))
            return self._creation(node, value, frame)
        if name in CREATION_DEFAULT:
            # ``full(shape, r)`` holds r: a power of two stays the base of a geometric sequence.
            fill = args[1] if name == "full" and len(args) > 1 else kwargs.get("fill_value") if name == "full" else None
            value = self._creation_value(node, name, args, kwargs, frame, roles_from=fill,
                                         default_reason=f"torch.{name}(...) without dtype")
            if _square_shape(self.facts, node):
                value = value.with_(thin=False)  # an [S, S] mask: adding it makes a bias full
            if args and args[0].sort is Sort.TUPLE and args[0].payload == ():
                value = value.with_(ndim=0)  # full((), x): a zero-dimensional tensor
            if fill is not None and _const_number(fill) is not None:
                value = value.with_(extent=int(abs(_const_number(fill))) + 1)  # full(shape, 6) holds 6
            if name == "full":
                value = value.with_(products=value.products | {ONE_VALUE_FILL})
                if value.has(Role.FREQ_INDEX):
                    # a loop's counter filled in (``full(b, 1.0 - i * h)``, a sampler's time at step i)
                    value = value.with_(roles=(value.roles - {Role.FREQ_INDEX}) | {Role.POSITIONS})
            if name in RANDOM_CREATION:
                rows = _matrix_rows(args)
                wide = {WIDE_RANDOM_DRAW} if rows is not None and rows > MOST_COORDINATES else set()
                uniform = {UNIFORM_DRAW} if name == "rand" else set()
                value = value.with_(products=value.products | {RANDOM_DRAW} | wide | uniform)
            if name == "ones":
                # Its sides, where literal: a running count along one of them stays below it.
                return value.with_(payload_key="ones", payload=_literal_sides(args))
            if name == "zeros":
                return value.with_(payload_key=ZEROS)
            if name == "full" and _exact_fill(fill) and not self._defaulted_fill(node, frame):
                return value.with_(payload_key=ONE_VALUE, payload=_const_number(fill))
            return value
        if name in LIKE:
            like = args[0] if args else UNKNOWN
            dtype = self._dtype_arg(kwargs, node)
            fill = args[1] if name == "full_like" and len(args) > 1 else kwargs.get("fill_value", UNKNOWN)
            if dtype:
                like = UNKNOWN  # a dtype given: nothing of the model's tensor's dtype is taken, nor rounded
            elif args and like.prec is Prec.UNKNOWN:
                # ``ones_like(x)`` of an input is ``ones(x.shape, dtype=x.dtype)``: the input's dtype
                taken = self.dtype_of(like, node.args[0], frame)
                origin = Origin.at(node, taken.origin.reason, taken.prec) if taken.origin else None
                like = like.with_(prec=taken.prec, origin=origin, is_complex=taken.is_complex)
            base = tensor(like.prec, like.origin, is_complex=like.is_complex,
                          payload_key="ones" if name == "ones_like" else ZEROS if name == "zeros_like" else None,
                          roles=fill.roles & {Role.POW2} if name == "full_like" else frozenset())
            if name in RANDOM_CREATION:
                base = base.with_(products=base.products | {RANDOM_DRAW} | ({UNIFORM_DRAW} if name == "rand_like" else set()))
            return self.cast(base, dtype, node, node, frame) if dtype else base
        if name in TRIG or name in ("cos_", "sin_"):
            return self.trig(node, args[0] if args else UNKNOWN, frame, name.rstrip("_"))
        if name == "polar":
            angle = args[1] if len(args) > 1 else kwargs.get("angle", UNKNOWN)
            self._mark_rotary(angle, "cos")
            self._mark_rotary(angle, "sin")
            self._record(Trig(node, angle, frame.site()), ("trig", node_key(node), angle, frame.site()))
            return angle.with_(sort=Sort.TENSOR, roles=frozenset({Role.ROTARY_COMPLEX}), is_complex=True)
        if name in ("view_as_complex", "complex"):
            parts = args if name == "complex" else args[:1]
            base = merge_all(parts) if parts else UNKNOWN
            if base.has(Role.TRIG):  # view_as_complex(stack([cos, sin], -1)), complex(cos, sin)
                base = base.with_(roles=frozenset({Role.ROTARY_COMPLEX}))
            return base.with_(is_complex=True)
        if name == "view_as_real":
            base = args[0] if args else UNKNOWN
            return base.with_(is_complex=False)
        if name in MATRIX_PRODUCTS:
            if name in ("baddbmm", "addbmm", "addmm") and args:
                self.sinks.reach_attention(args[0])  # baddbmm(bias, q, k): the bias the scores start from
            return self._matrix_product(name, node, args, kwargs, frame)
        if name in CONCAT:
            items = args[0] if args else UNKNOWN
            if items.sort is Sort.TUPLE and isinstance(items.payload, tuple) and items.payload:
                dim = _const_int_value(kwargs.get("dim", kwargs.get("axis", args[1] if len(args) > 1 else UNKNOWN)))
                self._note_grid_axes(items.payload, dim if name != "stack" else None)
                if name != "stack" and dim is not None:
                    self.sinks.concatenate(items.payload, dim)
                return _concatenated(items.payload, stacked=name == "stack")
            if isinstance(items.payload, Value) and _is_list_of(items):  # cat([... for ...])
                return items.payload.with_(ndim=None, axis=None)
            return items if items.is_tensor else UNKNOWN
        if name == "meshgrid":
            if len(args) == 1 and isinstance(args[0].payload, Value) and _is_list_of(args[0]):
                # meshgrid(*[linspace(...) for n in sizes]): per axis, a grid of the axis's values, its shape unknown
                grid = args[0].payload.with_(ndim=None, axis=None)
                return args[0].with_(payload=grid, payload_key=("list-of", grid.sort.value, grid.roles, grid.products,
                                                                grid.recent))
            grids = list(args[0].payload) if len(args) == 1 and args[0].sort is Sort.TUPLE \
                and isinstance(args[0].payload, tuple) else list(args)
            n = len(grids)
            outs = tuple(g.with_(ndim=n, axis=i - n) for i, g in enumerate(grids))
            return Value(sort=Sort.TUPLE, payload=outs, payload_key=outs)
        if name in ("chunk", "split", "unbind"):
            base = args[0] if args else UNKNOWN
            part = _split_part(name, base, args[1:], kwargs)
            outs = (part, part)
            return Value(sort=Sort.TUPLE, payload=outs, payload_key=outs)
        if name == "where" and len(args) >= 3:
            return merge(args[1], args[2])
        receiver = args[0] if args else UNKNOWN
        return self.tensor_method(name, receiver, node, args[1:], kwargs, frame, function_form=True)

    def library_call(self, effect: str, node: ast.Call, args: List[Value], kwargs: Dict[str, Value],
                     frame: Frame, time_position: Optional[int] = None) -> Value:
        """A call of a third-party helper, by its summary (poslint.analysis.library_summaries)."""
        first = args[0] if args else UNKNOWN
        if effect in ("multiplies", "contracts") and len(args) == 3 and len(node.args) == 3:
            # einx.multiply("b, d -> b d", t, inv_freq): the pattern, then the two operands
            (a, b), (a_node, b_node) = args[1:], node.args[1:]
            op = "*" if effect == "multiplies" else "einsum"
            product = self.product(node, op, a, a_node, b, b_node, frame)
            if product is not None:
                return product
            # Not (yet) an angle product: its trace lets a later cos/sin confirm it as one.
            return merge(a, b).with_(sort=Sort.TENSOR, roles=frozenset(), recent=self._trace(node, a, b))
        if effect == "preserves":
            pattern = node.args[1] if len(node.args) > 1 else None
            if first.is_tensor and first.ndim is not None and isinstance(pattern, ast.Constant) \
                    and isinstance(pattern.value, str):
                return first.with_(**_einops_axes(pattern.value, first))
            return first
        if effect == "integrates" and len(args) >= 3 and len(node.args) >= 3:
            # odeint(func, y0, t): func runs on the grid's times in the state's dtype
            state, state_node = args[1], node.args[1]
            times = self.cast(args[2], self.dtype_of(state, state_node, frame), node, node.args[2], frame)
            self.call_value(args[0], [times, state], frame)
            # the states are the initial state's quantity carried along (CLEX's log-frequencies), as
            # rounded as it was
            return Value(sort=Sort.TENSOR, prec=state.prec, origin=state.origin, roles=state.roles,
                         rounded=state.rounded) if state.is_tensor else UNKNOWN_TENSOR
        if effect == "attention-bias":
            if args:
                self.sinks.reach_attention(args[0])
            return UNKNOWN
        if effect == "either-argument":
            return merge(args[0], args[1]) if len(args) == 2 else UNKNOWN
        if effect == "returns-last":
            return args[-1] if args else UNKNOWN
        if effect == "embeds-timesteps":
            self._embed_timesteps(node, list(zip(args[:1], node.args)), frame)
            return UNKNOWN_TENSOR
        if effect == "denoiser-model":
            embedder = _TimestepEmbedder(all_but_last=False, keywords=("timestep", "timesteps", "guidance"),
                                         position=time_position)
            return Value(sort=Sort.CALLABLE, payload=embedder, payload_key=embedder)
        if effect == "rotary-module":
            return Value(sort=Sort.OTHER, payload=_LibraryRotary(), payload_key=("library rotary", node_key(node)))
        if effect == "flash-rotary":
            # (``pos_idx_in_fp32`` by keyword, or as the fifth positional argument)
            flag = next((k.value for k in node.keywords if k.arg == "pos_idx_in_fp32"),
                        node.args[4] if len(node.args) > 4 else None)
            if isinstance(flag, ast.Constant) and flag.value is False:
                return Value(sort=Sort.OTHER, payload=_FlashRotary(flag), payload_key=("flash rotary", node_key(node)))
            return UNKNOWN
        if effect == "hf-rotary":
            rotary = _TransformersRotary(self.names.qualname(node.func) or "")
            return Value(sort=Sort.OTHER, payload=rotary, payload_key=("hf rotary", node_key(node)))
        if effect in ("timestep-embedder", "timesteps-embedder"):
            embedder = _TimestepEmbedder(all_but_last=effect == "timesteps-embedder")
            return Value(sort=Sort.CALLABLE, payload=embedder, payload_key=embedder)
        if effect == "applies-rotary":
            for table in [*args[1:3], *(kwargs[k] for k in ("cos", "sin") if k in kwargs)]:
                self.sinks.reach_tables(table)
            return Value(sort=Sort.TENSOR, prec=first.prec, origin=first.origin) if first.is_tensor else UNKNOWN_TENSOR
        if effect == "alibi-builder":
            # build_alibi_tensor(attention_mask, num_heads, dtype): slopes x absolute positions, in dtype
            dtype = self._dtype_arg(kwargs, node) if "dtype" in kwargs else \
                args[2] if len(args) > 2 and args[2].sort is Sort.DTYPE else None
            bias = tensor(Prec.F32, Origin.at(node, "a library's ALiBi builder"), roles=frozenset({Role.BIAS}),
                          relative=False, thin=True)
            return self.cast(bias, dtype, node, node, frame) if dtype is not None else bias
        if effect == "rope-init":
            freqs = tensor(Prec.F32, Origin.at(node, "float32 frequencies from transformers' rope init", Prec.F32),
                           roles=frozenset({Role.FREQS}))
            return Value(sort=Sort.TUPLE, payload=(freqs, Value(sort=Sort.PYFLOAT)),
                         payload_key=("rope-init", node_key(node)))
        return UNKNOWN

    def _arange(self, node: ast.Call, args: List[Value], kwargs: Dict[str, Value], frame: Frame) -> Value:
        dtype = self._dtype_arg(kwargs, node)
        bounds = args + [kwargs[k] for k in ("start", "end", "step") if k in kwargs]
        literal_bounds = _arange_bounds(args, kwargs)
        if literal_bounds is None and len(args) == 1 and not kwargs.keys() & {"start", "end", "step"} \
                and args[0].sort is Sort.PYINT and args[0].magnitude is not None:
            literal_bounds = (0, int(args[0].magnitude), 1)  # ``arange(n)`` of a count the code bounds
        extra = dict(ndim=1, axis=-1, relative=False, thin=True, extent=_arange_extent(literal_bounds),
                     interval=_arange_interval(args, kwargs),
                     grids=frozenset({node_key(node)}),
                     series=series_ops.integers(*literal_bounds) if literal_bounds else _fractional_arange(args, kwargs))
        # ``arange(0, -n, -1)``: 0, -1, ..., the positions negated (a key axis that a sum with the
        # query's positions turns into key - query)
        negated = _descends_from_zero(args, kwargs)
        base = tensor(Prec.INT, Origin.at(node, "integer arange"),
                      roles=frozenset({Role.POSITIONS} | ({Role.NEGATIVE} if negated else set())), **extra)
        if _symmetric_bounds(node.args[:2]):
            self.symmetric_grids.add(node_key(node))
        end = node.args[1] if len(node.args) > 1 else node.args[0] if node.args else None
        if isinstance(end, (ast.Name, ast.Attribute)):
            self.grid_ends[node_key(node)] = ast.dump(end)
        if dtype is not None:
            return self.cast(base, dtype, node, node, frame, record=False)
        if any(b.sort is Sort.PYFLOAT or (b.is_tensor and b.prec not in (Prec.INT, Prec.UNKNOWN))
               for b in bounds):
            return self.default_tensor(node, frame, "arange with float bounds").with_(
                roles=frozenset({Role.POSITIONS}), **extra)
        return base

    def _creation_value(self, node, name, args, kwargs, frame, roles_from, default_reason) -> Value:
        dtype = self._dtype_arg(kwargs, node)
        roles = roles_from.roles if roles_from is not None else frozenset()
        log_spaced = name == "linspace" and any(bound.has(Role.LOGARITHM) for bound in args[:2])
        if log_spaced:
            # linspace(log(lo), log(hi), n): exponents, whose exp is a geometric sequence of frequencies
            roles = frozenset({Role.LOGARITHM})
        elif name == "linspace":
            roles = frozenset({Role.POSITIONS})
        extra = dict(ndim=1, axis=-1, relative=False, thin=True, products=frozenset({grid_key(node)}),
                     grids=frozenset({node_key(node)}), extent=_linspace_extent(args),
                     magnitude=_linspace_magnitude(args), interval=_linspace_interval(args),
                     series=_linspace_series(args, kwargs), whole=_unit_steps(node)) \
            if name == "linspace" and not log_spaced else {}
        if dtype is not None:
            return self.cast(tensor(Prec.UNKNOWN, roles=roles, **extra), dtype, node, node, frame, record=False)
        if name == "full" and len(args) > 1 and args[1].sort is Sort.PYINT:
            return tensor(Prec.INT, roles=roles)
        return self.default_tensor(node, frame, default_reason).with_(roles=roles, **extra)

    def _matrix_product(self, name: str, node: ast.Call, args: List[Value], kwargs: Dict[str, Value],
                        frame: Frame) -> Value:
        operands = list(zip(args, node.args))
        given = {k.arg: k.value for k in node.keywords if k.arg}
        operands += [(kwargs[word], given[word]) for word in PRODUCT_KEYWORDS.get(name, ())[len(operands):]
                     if word in given]
        if name == "einsum":
            # torch.einsum(pattern, *tensors); einops.einsum(*tensors, pattern)
            last_is_pattern = bool(node.args) and isinstance(node.args[-1], ast.Constant) \
                and isinstance(node.args[-1].value, str)
            operands = operands[:-1] if last_is_pattern else operands[1:]
            if len(operands) == 1 and operands[0][0].sort is Sort.TUPLE and isinstance(operands[0][0].payload, tuple):
                elts = operands[0][1].elts if isinstance(operands[0][1], (ast.List, ast.Tuple)) else []
                operands = list(zip(operands[0][0].payload, elts))
            if _einsum_raises(node, [v for v, _ in operands]):
                return UNKNOWN_TENSOR  # a pattern that names more or fewer axes than an operand has
        elif name in ("baddbmm", "addbmm", "addmm", "addmv", "addr"):
            operands = operands[1:]
        if len(operands) == 2:
            (a, a_node), (b, b_node) = operands
            if name in SAME_DTYPE_PRODUCTS:
                a, b = _same_dtype_operands(a, b)
            result = self.product(node, name, a, a_node, b, b_node, frame)
            if result is not None:
                return result
        if not operands:
            return UNKNOWN_TENSOR
        values = [v for v, _ in operands]
        trace = self._contraction_trace(node) if _contracts(name, node) else \
            frozenset({node_key(node)}).union(*(v.recent for v in values)) - self.cast_candidates
        return merge_all(values).with_(roles=frozenset(), ndim=None, axis=None, recent=trace)

    def _contraction_trace(self, node: ast.AST) -> frozenset:
        """The sink trace of a matrix product that is no angle product: itself only. It sums over
        an axis, mixing channels (a convolution's ``einsum("bcx,ocx->box", x, w)``, an MLP's
        ``h @ w``), so the products before it are not the angles a later cos/sin confirms."""
        return frozenset({node_key(node)}) - self.cast_candidates

    def trig(self, node: ast.AST, angle: Value, frame: Frame, which: str) -> Value:
        if angle.is_complex:  # cos of a complex spectrum: no rotation's angles are complex
            return angle.with_(roles=frozenset())
        self._mark_rotary(angle, which)
        if angle.magnitude is not None and self.recording:
            # the largest angle each product's angles reach here, literal scalings since included
            for key in angle.recent:
                self.facts.largest_angles[key] = max(self.facts.largest_angles.get(key, 0.0), angle.magnitude)
        if self.recording and angle.has(Role.ANGLES):
            # the literals the angles were multiplied by on the way here (``sin(angles * 0.01)``)
            scale = math.prod(self.facts.literal_scalings[k] for k in angle.recent if k in self.facts.literal_scalings)
            for key in angle.recent - self.facts.literal_scalings.keys():
                self.facts.trig_scales[key] = max(self.facts.trig_scales.get(key, 0.0), scale)
        self._record(Trig(node, angle, frame.site()), ("trig", node_key(node), angle, frame.site()))
        prec = angle.prec
        if angle.is_tensor and prec is Prec.INT:
            return self.default_tensor(node, frame, "cos/sin of an integer tensor").with_(roles=frozenset({Role.TRIG}))
        roles = frozenset({Role.TRIG}) if (angle.has(Role.ANGLES) or angle.has(Role.TRIG)) else frozenset()
        return angle.with_(roles=roles, sort=Sort.TENSOR if angle.sort is Sort.OTHER else angle.sort, periodic=which)

    def _escape(self, value: Value) -> None:
        if self.recording:
            if value.sort is Sort.TUPLE and isinstance(value.payload, tuple):
                for element in value.payload:
                    self._escape(element)
            else:
                self.facts.escaped.update(value.products)

    def _trace(self, node: ast.AST, a: Value, b: Value) -> frozenset:
        """The sink trace of a product's result. A product starts a new quantity: a cast before
        it cast what it scaled (positions, a timestep that ``t * pi / 2`` turns into a phase),
        not angles."""
        return candidate_trace(node, a, b) - self.cast_candidates

    def _passed_on(self, a: Value, b: Value) -> frozenset:
        """The sink trace through a sum, difference or quotient: of two tensors, a new quantity
        (a cast before it did not cast angles); with a number, the same quantity."""
        trace = a.recent | b.recent
        return trace if a.is_number or b.is_number else trace - self.cast_candidates

    def _mark_rotary(self, angle: Value, which: str) -> None:
        self.sinks.reach_trig(angle, which)
        if self.recording:
            self.facts.rotary_products.update(angle.recent)

    def tensor_method(self, name: str, receiver: Value, node: ast.Call, args: List[Value],
                      kwargs: Dict[str, Value], frame: Frame, function_form: bool = False) -> Value:
        value = self._tensor_method(name, receiver, node, args, kwargs, frame, function_form)
        drawn = receiver.products & {RANDOM_DRAW, UNIFORM_DRAW, PHASE}
        if name in TRANSFORMING and drawn - value.products:
            # the exp of a random draw (a log-uniform jitter) or of a phase is still no position
            value = value.with_(sort=Sort.TENSOR if receiver.is_tensor else value.sort, products=value.products | drawn)
        if name == "cpu" or name == "to" and (_on_cpu_device(node, self.names.qualname) or _cpu_device_of(args, kwargs)):
            value = _placed(value, (), cpu=True, literal=name == "cpu" or _on_cpu_device(node, self.names.qualname)
                            or _cpu_device_of(args, kwargs, literal=True))
        elif name in DEVICE_MOVES or name == "to" and _moves_device(args, kwargs):
            value = _placed(value, (), cpu=False)
        elif name in NEW_TENSOR_METHODS:
            value = _placed(value, (receiver,), cpu=False if "device" in kwargs else None)
        elif name in SIZE_ARGUMENTS:
            value = _placed(value, (receiver,))
        else:
            value = _placed(value, [receiver] + list(args) + list(kwargs.values()))
        if name == "exp" and receiver.magnitude is not None and receiver.magnitude <= MAX_EXP_MAGNITUDE:
            # a log-uniform jitter, ``uniform_(-log(r), log(r)).exp()``: within [1/r, r]
            low, high = value_range(receiver)
            value = value.with_(magnitude=math.exp(high), interval=(math.exp(low), math.exp(high)),
                                extent=math.ceil(math.exp(high)) + 1)
        elif value.magnitude is not None and name not in MAGNITUDE_KEEPING and name != "uniform_":
            value = value.with_(magnitude=1.0 if name in ("sigmoid", "tanh") else None,
                                interval={"sigmoid": (0.0, 1.0), "tanh": (-1.0, 1.0)}.get(name))
        elif value.interval is not None and name != "uniform_" and (
                name not in MAGNITUDE_KEEPING or name in ("clamp", "clip", "clamp_min", "clamp_")):
            value = value.with_(interval=None)  # (a clamp moves the low end: ``clamp(min=1)`` of a count)
        if name in TOTALS and not value.is_tensor and _is_opaque(receiver):
            value = UNKNOWN_TENSOR  # ``x.amax(-1)`` of an input: a tensor, of what x is
        if name in FULL_REDUCTIONS and value.is_tensor and len(args) == int(function_form) \
                and not {"dim", "axis"} & set(kwargs):
            value = value.with_(ndim=0, axis=None)  # ``ids.max()``: one number, a zero-dimensional tensor
        if value.is_tensor and (name in TOTALS) is not value.total:
            # A total stays one through a floor (``.clamp(min=1)``) and through shape changes.
            value = value.with_(total=name in TOTALS or value.total and name in TOTAL_KEEPING)
        if value.dyadic and name not in series_ops.KEEPING:
            value = value.with_(dyadic=False)
        if receiver.series is None and value.series is None:
            return value
        return value.with_(series=series_ops.after_method(name, receiver.series, value.series, value.prec))

    def _tensor_method(self, name: str, receiver: Value, node: ast.Call, args: List[Value],
                       kwargs: Dict[str, Value], frame: Frame, function_form: bool = False) -> Value:
        receiver_node = node.args[0] if function_form and node.args else (
            node.func.value if isinstance(node.func, ast.Attribute) else node)
        if _is_opaque(receiver) and not receiver.roles:
            receiver = receiver.with_(sort=Sort.TENSOR) if name in PRESERVING or name in CAST_METHODS \
                or name in ("to", "type", "type_as") else receiver
        if name in CAST_METHODS:
            target = dtype_value(CAST_METHODS[name], Origin.at(node, f".{name}()", float16=_float16(name)))
            return self.cast(receiver, target, node, receiver_node, frame)
        if name == "to":
            target = self._to_target(node, args, kwargs, frame)
            return self.cast(receiver, target, node, receiver_node, frame) if target else receiver
        if name == "type":
            if args:
                target = args[0]
                if target.sort is Sort.DTYPE:
                    return self.cast(receiver, target, node, receiver_node, frame)
                if target.sort is Sort.CALLABLE and target.origin is not None:
                    return self.cast(receiver, dtype_value(target.prec, target.origin), node, receiver_node, frame)
                if isinstance(target.payload_key, tuple) and target.payload_key[0] == "const":
                    tail = str(target.payload_key[1]).rsplit(".", 1)[-1]
                    if tail in TENSOR_TYPES:
                        return self.cast(receiver, dtype_value(TENSOR_TYPES[tail],
                                                               Origin.at(node, f"'{tail}'", float16=_float16(tail))),
                                         node, receiver_node, frame)
                return self.cast(receiver, dtype_value(Prec.UNKNOWN), node, receiver_node, frame)
            return UNKNOWN
        if name == "type_as":
            other = args[0] if args else UNKNOWN
            other_node = node.args[-1] if node.args else node
            return self.cast(receiver, self.dtype_of(other, other_node, frame), node, receiver_node, frame)
        if name in TRIG:
            return self.trig(node, receiver, frame, name)
        if name in RANDOM_FILLS:
            # ``empty(2).uniform_(-s, s)``: a draw (a shift, a jitter), no positions and no frequencies
            bounds = _uniform_bounds(args, kwargs) if name == "uniform_" else dict(magnitude=None, interval=None)
            return self._random_fill(node.func.value if isinstance(node.func, ast.Attribute) else None, receiver,
                                     name in ("uniform_", "random_"), frame, bounds)
        if name in ("exp", "exp2", "expm1") and receiver.has(Role.BIAS):
            self.sinks.exponentiated.update(receiver.recent)
        if name == "exp" and receiver.has(Role.LOGARITHM) and receiver.is_tensor:
            value = self._float_op(receiver, node, frame).with_(roles=frozenset({Role.FREQS}))
            return self._creation(node, value, frame)
        if name in ("exp", "exp2") and (receiver.has(Role.POSITIONS) or receiver.has(Role.FREQ_INDEX)) \
                and SCALED_BY_INPUT not in receiver.products and receiver.thin is not False:
            # (``exp(-t * rates)``: a decay window; the exp of a full matrix of distances, a decay
            # mask, varies along two axes where a frequency table's index varies along one)
            if name == "exp" and not receiver.has(Role.NEGATIVE):
                # exp(index * c) grows (log-spaced bins, schedules): frequencies only once inverted.
                return self._float_op(receiver, node, frame).with_(roles=frozenset({Role.GROWTH}))
            role = Role.SLOPES if name == "exp2" else Role.FREQS
            value = self._float_op(receiver, node, frame).with_(roles=frozenset({role}))
            return self._creation(node, value, frame)
        if name == "reciprocal" and (receiver.has(Role.GROWTH) or receiver.has(Role.GROWTH2)):
            inverse = Role.SLOPES if receiver.has(Role.GROWTH2) else Role.FREQS
            value = self._float_op(receiver, node, frame).with_(roles=frozenset({inverse}))
            return self._creation(node, value, frame)
        if name in ("neg", "negative"):
            return negated(receiver)
        if name == "exp" and receiver.is_complex and IMAGINARY_MULTIPLE in receiver.products:
            # exp(1j * band * w): cos + i sin of the product, whichever operand the unit multiplied first
            self._mark_rotary(receiver, "cos")
            self._mark_rotary(receiver, "sin")
        if name == "exp" and receiver.is_complex and receiver.has(Role.ANGLES):
            return receiver.with_(roles=frozenset({Role.ROTARY_COMPLEX}))  # exp(1j * angles)
        if name in ("pow", "float_power"):
            exponent = args[0] if args else UNKNOWN
            op_node = node
            return self.binop(ast.Pow(), receiver, exponent, op_node, receiver_node,
                              node.args[-1] if node.args else node, frame)
        if name in ("outer", "ger", "matmul", "mm", "bmm", "mv"):
            other = args[0] if args else UNKNOWN
            other_node = node.args[-1] if node.args else node
            if name in SAME_DTYPE_PRODUCTS:
                receiver, other = _same_dtype_operands(receiver, other)
            result = self.product(node, name, receiver, receiver_node, other, other_node, frame)
            return result if result is not None else tensor(
                self.promote(receiver, other, node, frame, False).prec,
                recent=self._trace(node, receiver, other) if name in ("outer", "ger")
                else self._contraction_trace(node))
        if name in ("mul", "multiply") and args:
            return self.binop(ast.Mult(), receiver, args[0], node, receiver_node, node.args[-1], frame)
        if name in ("div", "true_divide", "divide") and args:
            # div(x, c, rounding_mode="floor") is floor division: its quotients are integers
            rounding = next((k.value.value for k in node.keywords if k.arg == "rounding_mode"
                             and isinstance(k.value, ast.Constant)), None)
            op = ast.FloorDiv() if rounding in ("floor", "trunc") else ast.Div()
            return self.binop(op, receiver, args[0], node, receiver_node, node.args[-1], frame)
        if name in ("add", "sub", "subtract") and args:
            op = ast.Add() if name == "add" else ast.Sub()
            return self.binop(op, receiver, args[0], node, receiver_node, node.args[-1], frame)
        if name == "reciprocal":
            return self._float_op(receiver, node, frame)
        if name == "cumsum":
            dtype = self._dtype_arg(kwargs, node)
            # A running count (over a mask, of ones) is a position; a cumsum of floats (log-decays) is
            # not, nor one of phases or random draws (arc lengths of a slice sampler's intervals).
            # An input of unknown dtype counts: a float input's cumsum meets no frequencies.
            counts = (receiver.prec in (Prec.INT, Prec.UNKNOWN) or receiver.payload_key == "ones") \
                and not receiver.products & NOT_POSITIONAL
            base = receiver.with_(sort=Sort.TENSOR,
                                  roles=receiver.roles | {Role.POSITIONS} if counts else receiver.roles,
                                  prec=Prec.INT if receiver.prec in (Prec.UNKNOWN,) else receiver.prec,
                                  relative=False, axis=-1 if receiver.ndim is None else receiver.axis,
                                  grids=frozenset({node_key(node)}) if counts else receiver.grids,
                                  payload_key=None,  # a running count of ones holds many values
                                  payload=None,
                                  extent=_count_extent(receiver, args, kwargs), magnitude=None, interval=None,
                                  recent=receiver.recent - self.cast_candidates)  # a count, not what was cast
            return self.cast(base, dtype, node, receiver_node, frame, record=False) if dtype else base
        if name in NEW_TENSOR_METHODS:
            # ``like.new_zeros(shape, dtype=torch.float32)``: the receiver's dtype unless one is given.
            base = tensor(receiver.prec if receiver.is_tensor else Prec.UNKNOWN, receiver.origin,
                          payload_key="ones" if name == "new_ones" else ZEROS if name == "new_zeros" else None)
            dtype = self._dtype_arg(kwargs, node)
            return self.cast(base, dtype, node, node, frame, record=False) if dtype else base
        if name == "view" and args and args[0].sort is Sort.DTYPE:
            # A bit reinterpretation, not a conversion: nothing is rounded.
            return receiver.with_(sort=Sort.TENSOR, prec=args[0].prec, is_complex=args[0].is_complex,
                                  origin=Origin.at(node, f"a .view() of the bits as {args[0].prec.value}",
                                                   args[0].prec), rounded=None)
        if name in ("unsqueeze", "view", "reshape", "expand", "squeeze", "flatten"):
            ndim, axis = _reshape_axes(name, receiver, node, frame, self)
            return receiver.with_(ndim=ndim, axis=axis, thin=_expanded_thin(node, receiver) if name == "expand" else receiver.thin)
        if name in ("t", "transpose", "swapaxes") and receiver.is_tensor:
            dims = [_const_int(a) for a in node.args] if name != "t" else [0, 1]
            if len(dims) == 2 and None not in dims:
                return _swapped(receiver, dims[0], dims[1])
            return receiver.with_(axis=None)
        if name in ("repeat", "expand_as", "broadcast_to", "tile"):
            return receiver.with_(thin=False)
        if name == "diag" and receiver.ndim == 2:
            name = "diagonal"  # ``torch.diag`` of a matrix is its diagonal (of a vector, a matrix)
        if name == "diagonal" and receiver.has(Role.BIAS):
            return receiver.with_(roles=receiver.roles | {Role.QUERY_BIAS})
        if name == "diagonal" and receiver.has(Role.POSITIONS):
            if receiver.thin and receiver.ndim == 2:
                # The diagonal of a 1 x N view is its first element: a constant, not query positions.
                return receiver.with_(roles=receiver.roles - {Role.POSITIONS}, ndim=1, axis=None, thin=None)
            return receiver.with_(ndim=1, axis=-1, thin=True)
        if name in ("chunk", "split", "unbind"):
            part = _split_part(name, receiver, args, kwargs)
            outs = (part, part)
            return Value(sort=Sort.TUPLE, payload=outs, payload_key=outs)
        if name in ("size", "numel", "dim", "item") and not receiver.has(Role.POSITIONS):
            return Value(sort=Sort.PYINT)
        if name in ("softmax", "log_softmax"):
            self.sinks.reach_softmax(receiver)
        if name in PREDICATES:
            return _boolean(receiver)
        if name in ("clamp", "clip", "clamp_") and receiver.is_tensor and receiver.has(Role.POSITIONS) \
                and (receiver.relative or held_by_module(receiver)):
            # key - query distances clamped (``clamp(q - k, min=0)``: future keys at zero, or a
            # window's bound), or coordinates the module holds kept within a range (anchor points):
            # positions still, each one as rounded as it was, within the literal bounds where both
            # are given (a grid made on the spot and clamped is a ramp: YaRN's blend over channels)
            return _clamped(receiver, args, kwargs)
        if name in ("log", "log2", "log10") and receiver.is_tensor and not receiver.roles \
                and receiver.series is not None and len(receiver.series.exact) == 1:
            # ``torch.log(torch.tensor([10000.0]))``: the logarithm of a constant, a number as
            # ``math.log(10000)`` is (a sinusoid's timescale increment), no grid of logarithms
            return NUMBER_LIKE.with_(roles=frozenset({Role.LOGARITHM}))
        if name == "log" and receiver.is_tensor and receiver.has(Role.FREQS):
            # log-space frequencies (CLEX scales them there): ``exp`` makes them frequencies again,
            # rounded where they were
            return receiver.with_(roles=frozenset({Role.LOGARITHM}), recent=frozenset(), whole=False)
        if name in ROLE_KILLING:
            if receiver.is_tensor:  # (a square root or a sigmoid of whole numbers is not whole)
                # (a clamped phase or random draw is still one: no positions in it)
                return receiver.with_(roles=frozenset(), recent=frozenset(), whole=False,
                                      products=receiver.products & NOT_POSITIONAL
                                      | (frozenset({PHASE}) if name in INVERSE_TRIG else frozenset()))
            return UNKNOWN_TENSOR.with_(products=frozenset({PHASE})) if name in INVERSE_TRIG else UNKNOWN
        if name in PRESERVING:
            if name in BOUND_BREAKING and (receiver.extent is not None or receiver.whole):
                receiver = receiver.with_(extent=None, whole=False)
            return receiver if name in VALUE_KEEPING or not _holds_one_value(receiver) \
                else receiver.with_(payload_key=None)
        return UNKNOWN

    def _float_op(self, receiver: Value, node: ast.AST, frame: Frame) -> Value:
        if receiver.is_tensor and receiver.prec is Prec.INT:
            return self.default_tensor(node, frame, "a float op on an integer tensor").with_(roles=receiver.roles)
        return receiver.with_(whole=False) if receiver.whole else receiver

    def _to_target(self, node: ast.Call, args: List[Value], kwargs: Dict[str, Value],
                   frame: Frame) -> Optional[Value]:
        """The dtype ``.to(...)`` converts to: ``dtype=``, a dtype argument, or ``.to(other)``."""
        if "dtype" in kwargs:
            return self._dtype_arg(kwargs, node)
        # ``.to(device, dtype)``: before another positional argument (not ``non_blocking`` of
        # ``.to(other, True)``), the first is a device, however it is written (``cfg["device"]``)
        device_first = len(node.args) >= 2 and not (isinstance(node.args[1], ast.Constant)
                                                     and isinstance(node.args[1].value, bool))
        for i, (arg, arg_node) in enumerate(zip(args, node.args)):
            if arg.sort is Sort.DTYPE:
                return arg
            if arg.payload_key == ("const", None) or arg.payload_key == "device" or i == 0 and device_first:
                continue
            src = self.facts.source(arg_node)
            # An argument nothing here binds is a device, a dtype or a tensor by how the function
            # uses it elsewhere (``device=arg``, ``dtype=arg``, ``arg.shape``); otherwise unknown.
            kind = (_carried_kind(arg) or self._parameter_kind(arg_node, frame)) if _is_opaque(arg) else None
            if kind == "dtype":
                # ``.to(dtype)`` with a dtype argument no caller here shows: the model's dtype.
                return _callers_dtype(arg_node, src)
            if arg.sort is Sort.TENSOR or kind == "tensor":
                return self.dtype_of(arg, arg_node, frame)
            if _is_opaque(arg) and kind is None:
                return dtype_value(Prec.UNKNOWN)
        return None

    def _parameter_kind(self, node: ast.AST, frame: Frame) -> Optional[str]:
        """"device", "dtype" or "tensor": what the function does with the name ``node`` elsewhere."""
        if not isinstance(node, ast.Name) or frame.function is None:
            return None
        return self._kind_in(frame.function, node.id)

    def _kind_in(self, fn: FunctionInfo, name: str) -> Optional[str]:
        """What ``fn``'s uses of ``name`` show it is, its own uses and those of the in-file
        functions it passes ``name`` to (one call deep); None when they disagree or say nothing."""
        if id(fn.node) not in self._kinds_by_function:
            kinds = parameter_kinds(fn.node)
            for call in self.model.calls_in(fn.node):
                callee = self._callee_of(fn, call)
                if callee is None or callee is fn or isinstance(callee.node, ast.Lambda):
                    continue
                theirs = parameter_kinds(callee.node)
                spec = callee.node.args
                params = [a.arg for a in spec.posonlyargs + spec.args]
                if callee.cls is not None and not is_static(callee.node):
                    params = params[1:]
                passed = [(params[i], arg) for i, arg in enumerate(call.args) if i < len(params)]
                passed += [(k.arg, k.value) for k in call.keywords if k.arg]
                for param, arg in passed:
                    if isinstance(arg, ast.Name) and param in theirs:
                        kinds.setdefault(arg.id, set()).update(theirs[param])
            self._kinds_by_function[id(fn.node)] = kinds
        found = self._kinds_by_function[id(fn.node)].get(name, set())
        return next(iter(found)) if len(found) == 1 else None

    def _callee_of(self, fn: FunctionInfo, call: ast.Call) -> Optional[FunctionInfo]:
        """The in-file function a call names: ``helper(...)`` or ``self.method(...)``."""
        func = call.func
        if isinstance(func, ast.Name):
            return self.functions.get(func.id)
        if fn.cls is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == "self":
            return fn.cls.lookup_method(func.attr)
        return None

    def cast(self, value: Value, target: Optional[Value], node: ast.AST, receiver_node: ast.AST,
             frame: Frame, record: bool = True) -> Value:
        if target is None:
            return value
        if target.sort is not Sort.DTYPE:
            return value
        before = value
        prec = target.prec
        reason = target.origin.reason if target.origin else prec.value
        # Integers below 257 lose nothing in 16 bits (arange(1, 5, dtype=x.dtype)), below 2049 in float16.
        float16 = prec is Prec.LOW and target.origin is not None and target.origin.float16
        exact = prec.may_be_16bit and (value.prec is Prec.INT or value.whole) and value.extent is not None \
            and value.extent <= (FP16_EXACT_UP_TO if float16 else BF16_EXACT_UP_TO) + 1
        origin = Origin.at(node, reason, prec, relative=value.relative, exact=exact, float16=float16,
                           cast=not held_by_module(value))
        rounded = value.rounded
        if value.prec.may_be_16bit and value.is_tensor:
            # Once rounded, always rounded: a later cast, up or down, does not undo it.
            rounded = rounded or value.origin
        if prec is Prec.INT:
            rounded = None
        after = value.with_(sort=Sort.TENSOR, prec=prec, origin=origin, rounded=rounded,
                            series=series_ops.rounded(value.series, prec, float16),
                            # integers made float32 or wider stay whole numbers (below 2 ** 24)
                            whole=value.whole or value.prec is Prec.INT and prec.is_float32_or_better
                            and value.extent is not None,
                            # ``.to(arg)`` of an arg that may be a device keeps a complex tensor complex
                            is_complex=target.is_complex or value.is_complex and (
                                target.payload_key == CALLERS_DTYPE or prec is Prec.UNKNOWN),
                            payload=None if value.sort is Sort.TENSOR else value.payload,
                            # (what is cast to a dtype is a tensor, not the number an input was taken for)
                            payload_key=None if value.sort is Sort.TENSOR and value.payload_key not in (
                                "parameter", "buffer", *ONE_VALUE_KEYS) or value.payload_key == NUMBER_LIKE.payload_key
                            else value.payload_key)
        if value.payload_key and isinstance(value.payload_key, tuple) and value.payload_key[0] == "complex-buffer":
            after = after.with_(payload=None, payload_key=None)
        if record and not value.roles and value.sort in (Sort.TENSOR, Sort.OTHER) and prec.may_be_16bit \
                and not value.products & (NOT_POSITIONAL | {MODULE_CONSTANT}) and not _holds_one_value(value) \
                and value.series is None:
            # A value of unknown role (angles from another module) cast to 16 bits: if the cast
            # goes straight into both cos and sin, what was cast were angles. Random draws and
            # phases made here are not: nothing positional is in them; nor is a tensor of one
            # value (a zero-initialised buffer of learned rotations, loaded from a checkpoint), nor
            # values the code fixes (``tensor([pi / 2], dtype=dtype)``: a constant rotation).
            key = node_key(node)
            self.cast_candidates.add(key)
            after = after.with_(recent=after.recent | {key})
            # What a rotary kernel also takes as its cos/sin tables is cos/sin values, whatever
            # else takes their cos (Megatron's flash and unfused paths share one cast).
            if self.sinks.rotation(key) and key not in self.sinks.tables:
                before, after = (v.with_(roles=v.roles | {Role.ANGLES}) for v in (before, after))
        if record and (before.roles or before.is_complex):
            self._record(Cast(node, receiver_node, before, after, frame.site(),
                              target.origin.node if target.origin is not None else None,
                              target.payload.key if isinstance(target.payload, Origin) else None),
                         ("cast", node_key(node), before, after, frame.site()))
        return after


# --------------------------------------------------------------------------------------------
# helpers

# The evaluator of each expression node class (a lookup per node, not a getattr of a built name).
_EVALUATORS = {getattr(ast, name[len("_eval_"):]): method for name, method in vars(Interpreter).items()
               if name.startswith("_eval_") and isinstance(getattr(ast, name[len("_eval_"):], None), type)}
# Literals are evaluated over and over, and their values never change: one value for each.
# What an import executed on some path binds: the name resolves as the import says, where it is read.
IMPORT_BOUND_KEY = ("import-bound",)
IMPORT_BOUND = Value(sort=Sort.CALLABLE, payload_key=IMPORT_BOUND_KEY)
NONE_CONSTANT = Value(sort=Sort.OTHER, payload_key=("const", None))
# A configuration field left at its default None: no constant, since a user's configuration may set
# it; only the ranges past ``if field is not None`` follow the default (see _default_branch).
CONFIG_DEFAULT_NONE = Value(sort=Sort.OTHER, payload_key=("config default", None))
TRUE_CONSTANT, FALSE_CONSTANT = Value(sort=Sort.OTHER, payload_key=True), Value(sort=Sort.OTHER, payload_key=False)
AUTOCAST_OFF = Value(sort=Sort.OTHER, payload_key="autocast off")
_NUMBER_CONSTANTS: Dict[tuple, Value] = {}
MAX_NUMBER_CONSTANTS = 65536

_RANK_LOW = {Prec.DEFAULT: 1, Prec.ACTIVATION: 2, Prec.CONVERTED: 3, Prec.LOW: 4}


def _first_rounded(a: Value, b: Value) -> Optional[Origin]:
    return a.rounded or b.rounded


def _promoted_loss(a: Value, b: Value) -> Optional[Origin]:
    """Where a 16-bit table that a float32 operand widens was rounded: promotion (``inv_freq *
    gain.float()``) restores no more than ``.float()`` does. A 0-dim operand (a scale), values 16
    bits hold exactly, and a buffer of no known role (whose dtype may be an integer one: a year
    offset ``torch.tensor(years)``) are no loss."""
    for low in (a, b):
        origin = low.origin
        if low.is_tensor and low.ndim != 0 and low.roles and low.prec in (Prec.LOW, Prec.CONVERTED) \
                and origin is not None and origin.prec in (Prec.LOW, Prec.CONVERTED) and not origin.exact:
            return origin
    return None


def _upcast_here(before: Optional[Value], after: Value) -> bool:
    return before is not None and before is not after and after.prec.is_float32_or_better \
        and before.prec is not after.prec and after.sort in (Sort.TENSOR, Sort.DTYPE)


def _square_shape(facts, call: ast.Call) -> bool:
    """``torch.zeros(n, n)`` / ``torch.full((n, n), x)``: the last two sizes are the same expression."""
    shape = call.args
    if shape and isinstance(shape[0], (ast.Tuple, ast.List)):
        shape = shape[0].elts
    elif call.func and getattr(call.func, "attr", getattr(call.func, "id", "")) == "full":
        shape = shape[:-1]
    return len(shape) >= 2 and facts.source(shape[-1]) == facts.source(shape[-2])


# Modules of Python's own library: code poslint does not read either, but no rotary kernel.
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))

# How deep _folded_number follows an instantiation argument, and the arithmetic it folds.
_FOLD_DEPTH = 8
_FOLDED_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                     ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv, ast.Mod: operator.mod}

# The payload key of a dtype that a parameter no caller here binds passes: the model's dtype, real
# or, for a complex table, complex (a caller that builds one passes ``torch.complex64``).
CALLERS_DTYPE = "caller's dtype"


def _callers_dtype(node: ast.AST, src: str) -> Value:
    return dtype_value(Prec.ACTIVATION, Origin.at(node, f"the caller's dtype argument '{src}'", Prec.ACTIVATION)) \
        .with_(payload_key=CALLERS_DTYPE)


def _declared_integers(fn: Optional[FunctionInfo]) -> Set[str]:
    """The parameters of ``fn`` annotated ``torch.LongTensor`` or ``IntTensor`` (``Optional`` of them)."""
    spec = getattr(fn.node, "args", None) if fn is not None else None
    if not isinstance(spec, ast.arguments):
        return set()
    return {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)
            if any(TENSOR_TYPES.get(tail_name(part)) is Prec.INT for part in annotation_parts(a.annotation))}


def _unbound(name: str, kind: Optional[str] = None) -> Value:
    """A parameter that no caller in this file binds; ``kind`` is what its uses show it is
    ("device", "dtype", "tensor"), and travels with the value into the functions it is passed to."""
    return Value(sort=Sort.OTHER, payload_key=("param", name, kind))


def _on_cpu_device(call: ast.AST, qualname: Callable[[ast.AST], Optional[str]]) -> bool:
    """A call given the CPU as its device by a literal: ``device="cpu"``, ``torch.device("cpu")``,
    ``.to("cpu")``. CUDA autocast leaves what runs there alone (autocast is per device type)."""
    if not isinstance(call, ast.Call):
        return False
    given = [k.value for k in call.keywords if k.arg == "device"]
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        given.append(call.args[0])
    for device in given:
        if isinstance(device, ast.Call) and device.args and qualname(device.func) == "torch.device":
            device = device.args[0]
        if isinstance(device, ast.Constant) and isinstance(device.value, str) and device.value.split(":")[0] == "cpu":
            return True
    return False


def _cpu_device_of(args: Sequence[Value], kwargs: Dict[str, Value], literal: bool = False) -> bool:
    """A call given the device of a CPU tensor (``.to(device=freqs.device)``, ``zeros(n,
    device=t.device)`` of a ``t`` made with ``device="cpu"``; with ``literal``, put there by a literal)."""
    given = [kwargs["device"]] if "device" in kwargs else [a for a in args if a.payload_key == DEVICE.payload_key]
    return bool(given) and all(d.payload_key == DEVICE.payload_key and d.on_cpu and (d.cpu_literal or not literal)
                               for d in given)


def _placed(value: Value, operands: Sequence[Value], cpu: Optional[bool] = None, literal: bool = False) -> Value:
    """``value`` on the CPU if ``cpu``, or (``cpu`` None) if every tensor among ``operands`` (and the
    elements of sequences among them) is: torch runs an op where its tensor operands are. An
    untyped operand beside a CPU tensor of dimensions is a number or on the CPU too (torch refuses
    to mix it with a CUDA tensor of dimensions)."""
    if value.sort is not Sort.TENSOR:
        return value
    if cpu is None:
        flat = list(_flattened(operands))
        tensors = [v for v in flat if v.is_tensor]
        cpu = bool(tensors) and all(v.on_cpu for v in tensors) and (
            any(v.ndim for v in tensors) or not any(_is_opaque(v) for v in flat))
        literal = cpu and all(v.cpu_literal for v in tensors)
    literal = bool(cpu and literal)
    return value if value.on_cpu is cpu and value.cpu_literal is literal else value.with_(on_cpu=cpu, cpu_literal=literal)


def _flattened(values: Sequence[Value]):
    for value in values:
        if value.sort is Sort.TUPLE and isinstance(value.payload, tuple):
            yield from _flattened(value.payload)
        elif isinstance(value.payload, Value) and _is_list_of(value):
            yield value.payload
        else:
            yield value


def _moves_device(args: Sequence[Value], kwargs: Dict[str, Value]) -> bool:
    """Whether ``.to(...)`` may change the device: anything but dtypes (a device, a tensor)."""
    return "device" in kwargs or any(a.sort is not Sort.DTYPE for a in args)


def _is_opaque(value: Value) -> bool:
    """An untyped value: unknown, or a parameter nobody here binds."""
    return value.sort is Sort.OTHER and (value.payload_key is None or (
        isinstance(value.payload_key, tuple) and value.payload_key[0] == "param"))


def _const_int_value(value: Value) -> Optional[int]:
    key = value.payload_key
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "const" and type(key[1]) is int:
        return key[1]
    return None


def _const_whole_value(value: Value) -> Optional[int]:
    """A literal (or folded) int, or a float of a whole value, as an int."""
    number = _const_number(value)
    return int(number) if number is not None and float(number).is_integer() else None


def grid_key(node: ast.AST) -> tuple:
    """In ``products``: the value is computed from the ``linspace`` made at ``node`` (a negative line)."""
    key = node_key(node)
    return (-key[0],) + key[1:]


def _is_grid_key(key: tuple) -> bool:
    return key[0] < 0 <= key[1]  # a grid_key (NOT_POSITIONAL's columns are negative too)


def _moves_itself(target: ast.Attribute, value_node: Optional[ast.AST]) -> bool:
    """``self.x = self.x.to(...)`` (or ``.cuda()``, ``.half()``...): an attribute moved or converted
    and stored back under its own name."""
    return isinstance(value_node, ast.Call) and isinstance(value_node.func, ast.Attribute) \
        and value_node.func.attr in MODULE_RETURNING_SELF and isinstance(value_node.func.value, ast.Attribute) \
        and is_self_attr(value_node.func.value) and value_node.func.value.attr == target.attr


def _refuses_keywords(fn: FunctionInfo, kwargs: Dict[str, Value]) -> bool:
    """Whether a call passing ``kwargs`` by name raises TypeError before ``fn`` runs: a keyword it
    has no parameter for, and no ``**kwargs`` (a sampler's ``model(x, guidance=g)`` of a model
    whose forward takes no guidance)."""
    spec = fn.node.args
    if spec.kwarg is not None:
        return False
    named = {p.arg for p in (*spec.args, *spec.kwonlyargs)}
    return any(name != UNPACKED_KEYWORDS and name not in named for name in kwargs)


def _subclass_instance(fn: FunctionInfo, self_value: Optional[Value]) -> Optional[ClassInfo]:
    """The class of ``self_value`` when it is a proper subclass of the method's class."""
    if fn.cls is None or self_value is None or self_value.sort is not Sort.INSTANCE:
        return None
    cls = self_value.payload
    if not isinstance(cls, ClassInfo) or cls is fn.cls or not any(c is fn.cls for c in cls.mro()):
        return None
    return cls


def is_self_receiver(node: ast.AST, fn: FunctionInfo) -> bool:
    """Whether ``node`` is the method's own first parameter."""
    params = list(fn.node.args.posonlyargs) + list(fn.node.args.args)
    return isinstance(node, ast.Name) and bool(params) and node.id == params[0].arg


def _linear_form(node: Optional[ast.AST]) -> Optional[Tuple[Optional[str], float]]:
    """``node`` as a symbol plus a literal (``n - 1``: ("n", -1); ``8``: (None, 8)), else None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return None, node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and \
            isinstance(node.right, ast.Constant) and type(node.right.value) in (int, float):
        inner = _linear_form(node.left)
        if inner is not None and inner[0] is not None:
            return inner[0], inner[1] + (node.right.value if isinstance(node.op, ast.Add) else -node.right.value)
        return None
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return ast.dump(node), 0
    return None


def _unit_steps(node: ast.Call) -> bool:
    """Whether ``linspace(start, end, steps)`` steps by one from a whole start (``linspace(0, n - 1,
    steps=n)`` is ``arange(n)``): whole numbers, whatever ``n`` is."""
    bound = dict(zip(("start", "end", "steps"), node.args))
    bound.update((k.arg, k.value) for k in node.keywords if k.arg in ("start", "end", "steps"))
    start, end, steps = (_linear_form(bound.get(k)) for k in ("start", "end", "steps"))
    if start is None or end is None or steps is None or start[0] is not None or start[1] != int(start[1]):
        return False
    return end[0] == steps[0] and end[1] - start[1] == steps[1] - 1


def _linspace_extent(args: List[Value]) -> Optional[int]:
    """One more than the largest magnitude of ``linspace(a, b, n)`` with literal bounds: its values
    lie between them (``linspace(0, 1, steps)``: 2)."""
    bounds = [_const_number(v) for v in args[:2]]
    if len(bounds) < 2 or None in bounds:
        return None
    return int(max(abs(b) for b in bounds)) + 1


def _linspace_magnitude(args: List[Value]) -> Optional[float]:
    """The largest magnitude of ``linspace(a, b, n)`` with literal bounds."""
    bounds = [_const_number(v) for v in args[:2]]
    return None if len(bounds) < 2 or None in bounds else float(max(abs(b) for b in bounds))


def _linspace_interval(args: List[Value]) -> Optional[Tuple[float, float]]:
    """The range of ``linspace(a, b, n)`` with literal bounds."""
    bounds = [_const_number(v) for v in args[:2]]
    return None if len(bounds) < 2 or None in bounds else (float(min(bounds)), float(max(bounds)))


def _linspace_series(args: List[Value], kwargs: Dict[str, Value]) -> Optional[series_ops.Series]:
    """The values of ``linspace(a, b, n)`` with literal (or folded) bounds and count."""
    given = list(args[:3]) + [kwargs[k] for k in ("start", "end", "steps")[len(args):] if k in kwargs]
    numbers = [_const_number(v) for v in given]
    if len(numbers) < 3 or None in numbers or not float(numbers[2]).is_integer():
        return None
    return series_ops.spaced(float(numbers[0]), float(numbers[1]), int(numbers[2]))


def _remainder_extent(op: ast.operator, dividend: Value, divisor: Value) -> Optional[int]:
    """``x % c`` with a literal ``c > 0`` lies in [0, c): one more than its largest magnitude. (Not
    where ``x`` may be 16-bit already and holds positions of no known bound that a whole ``c > 1``
    wraps into chunks: they were rounded over their own range before they wrapped. A time wrapped
    into [0, 1) is a fraction.)"""
    c = _const_number(divisor) if isinstance(op, ast.Mod) else None
    if c is None or c <= 0:
        return None
    if dividend.prec.may_be_16bit and dividend.magnitude is None and dividend.has(Role.POSITIONS) \
            and c > 1 and float(c).is_integer():
        return None
    return int(c) + 1


def _shifted_extent(op: ast.operator, left: Value, right: Value) -> Optional[int]:
    """A literal grid's bound through arithmetic that keeps its values exact and apart: a literal
    whole number added or taken away (``arange(31) - 15``: magnitudes below 31 + 15), a division by a
    power of two (``arange(16) / 2``: as many distinct values, each exactly halved), or a floor
    division (``arange(h * w) // w``: the rows, below h)."""
    if isinstance(op, (ast.Add, ast.Sub)):
        for grid, other in ((left, right), (right, left)):
            shift = _const_number(other)
            if grid.is_tensor and grid.extent is not None and shift is not None and float(shift).is_integer():
                return grid.extent + abs(int(shift))
        return None
    divisor = _const_number(right) if isinstance(op, (ast.Div, ast.FloorDiv)) and left.is_tensor else None
    if left.extent is None or divisor is None or divisor < 1:
        return None
    if isinstance(op, ast.FloorDiv):  # whole quotients, below the bound divided
        return math.ceil(left.extent / divisor)
    return left.extent if math.log2(divisor).is_integer() else None


def _largest_angle(positions: Value, factor: Value) -> Optional[float]:
    """The largest angle of bounded positions times frequencies the code fixes (each of them, or a
    bound on them all: ``7 * 1e-4 ** linspace(0, 1, n)`` of any ``n`` lies within [0, 7]), else None."""
    if positions.magnitude is None:
        return None
    if factor.series is not None and factor.series.exact:
        return positions.magnitude * max(abs(f) for f in factor.series.exact)
    return positions.magnitude * factor.magnitude if factor.is_tensor and factor.magnitude is not None else None


def _interval(value: Value) -> Tuple[float, float]:
    """The range a literal number or a tensor holds where the code bounds it (else infinite)."""
    number = _const_number(value)
    if number is not None:
        return number, number
    return value_range(value) if value.is_tensor else (-math.inf, math.inf)


def _range(op: ast.operator, left: Value, right: Value) -> Optional[Tuple[float, float]]:
    """The range of a continuous arithmetic result the code bounds: a tensor divided by a total of
    what it counts (``counts / counts.sum()``, ``(y - 0.5) / (y[:, -1:] + eps)``: within [-1, 1]), and
    interval arithmetic on bounded tensors and literals (``unit * 2 * math.pi``, ``2 * t - 1``,
    coordinates times a jitter in [1/r, r] or plus a shift in [-s, s], a literal base to a bounded
    power); None where unbounded."""
    if isinstance(op, ast.Div) and (left.is_tensor or _is_opaque(left)) and right.is_tensor and right.total:
        return -1.0, 1.0
    if not (left.is_tensor or right.is_tensor):
        return None
    (a, b), (c, d) = _interval(left), _interval(right)
    if isinstance(op, ast.Mult):
        ends = [0.0 if 0 in (x, y) else x * y for x in (a, b) for y in (c, d)]
    elif isinstance(op, ast.Add):
        ends = [a + c, b + d]
    elif isinstance(op, ast.Sub):
        ends = [a - d, b - c]
    elif isinstance(op, ast.Div) and c == d and c != 0:
        ends = [a / c, b / c]
    elif isinstance(op, ast.Pow) and a == b and a > 0 and max(abs(c), abs(d)) * abs(math.log(a)) <= MAX_EXP_MAGNITUDE:
        ends = [a ** c, a ** d]  # ``2 ** linspace(0, 7, n)``: bands from 1 to 128
    else:
        return None
    low, high = min(ends), max(ends)
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def _uniform_bounds(args: List[Value], kwargs: Dict[str, Value]) -> Dict[str, object]:
    """The magnitude and range of what ``uniform_(a, b)`` draws, with literal (or folded) bounds
    ([0, 1) by default)."""
    bounds = [_const_number(v) for v in args[:2]] + [0.0, 1.0][len(args):]
    if kwargs or None in bounds:
        return dict(magnitude=None, interval=None, extent=None)
    high = max(abs(b) for b in bounds[:2])
    return dict(magnitude=high, interval=(min(bounds[:2]), max(bounds[:2])), extent=math.ceil(high) + 1)


def _takes_last(index: ast.AST) -> bool:
    """Whether a subscript picks the last entry of an axis: ``[-1]``, ``[:, -1:]``, ``[..., -1, None]``."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    for part in parts:
        start = part.lower if isinstance(part, ast.Slice) and part.upper is None and part.step is None else part
        if isinstance(start, ast.UnaryOp) and isinstance(start.op, ast.USub) and \
                isinstance(start.operand, ast.Constant) and start.operand.value == 1:
            return True
    return False


def _power_of_two(number: Optional[float]) -> bool:
    return number is not None and number > 0 and math.frexp(number)[0] == 0.5


def _dyadic_data(data: Value) -> bool:
    """Whether a tensor's data are powers of two of whole exponents: a list of ``2 ** i`` for
    whole ``i``, or a literal list of powers of two (``[1, 2, 4, 8]``)."""
    if isinstance(data.payload, Value) and _is_list_of(data):
        return data.payload.dyadic
    if data.sort is Sort.TUPLE and isinstance(data.payload, tuple) and data.payload:
        return all(isinstance(v, Value) and (v.dyadic or _power_of_two(_const_number(v))) for v in data.payload)
    return False


def _dyadic(op: ast.operator, left: Value, right: Value) -> bool:
    """Whether ``left op right`` holds powers of two of whole exponents: a literal power of two
    raised to integers (``2.0 ** arange(n)``), or such powers scaled by a literal power of two."""
    if isinstance(op, ast.Pow):
        exponents = right.series is not None and all(v == int(v) for v in right.series.exact)
        return _power_of_two(_const_number(left)) and right.is_tensor and (
            right.prec is Prec.INT or right.whole or exponents)
    if isinstance(op, (ast.Mult, ast.Div)):  # (2 ** k / 2 and 2 / 2 ** k alike)
        return left.dyadic and _power_of_two(_const_number(right)) or right.dyadic and _power_of_two(_const_number(left))
    return False


def _whole_extent(op: ast.operator, left: Value, right: Value) -> Optional[int]:
    """The bound of the whole numbers that a sum, difference or product of whole tensors and whole
    literals holds (NaN flags: ``isnan(x) * -2.0 + isinf(x) * 4.0`` holds magnitudes up to 6), kept
    only while every 16-bit dtype holds them exactly: past that, how many stay distinct depends on
    which numbers they are."""
    if isinstance(op, (ast.Mod, ast.FloorDiv)) and left.is_tensor:
        # a whole grid wrapped or floor-divided by a whole literal: whole numbers still, below the
        # literal (``cell % side``: the columns) or below the bound divided (``cell // side``: the rows)
        bound, divisor = _whole_bound(left), _const_number(right)
        if bound is None or divisor is None or not float(divisor).is_integer() or divisor < 1:
            return None
        largest = int(divisor) - 1 if isinstance(op, ast.Mod) else bound // int(divisor)
        return largest + 1 if largest <= BF16_EXACT_UP_TO else None
    if not isinstance(op, (ast.Add, ast.Sub, ast.Mult)) or not (left.is_tensor or right.is_tensor):
        return None
    bounds = [_whole_bound(v) for v in (left, right)]
    if None in bounds:
        return None
    largest = bounds[0] * bounds[1] if isinstance(op, ast.Mult) else bounds[0] + bounds[1]
    return largest + 1 if largest <= BF16_EXACT_UP_TO else None


def _clamped(value: Value, args: List[Value], kwargs: Dict[str, Value]) -> Value:
    """``value.clamp(low, high)``: its range narrowed to literal bounds."""
    low = _const_number(kwargs.get("min", args[0] if args else UNKNOWN))
    high = _const_number(kwargs.get("max", args[1] if len(args) > 1 else UNKNOWN))
    if low is None or high is None or low > high:
        return value
    if value.interval is not None:
        low, high = max(low, value.interval[0]), min(high, value.interval[1])
        if low > high:
            return value
    return value.with_(interval=(float(low), float(high)), magnitude=float(max(abs(low), abs(high))))


def _expanded_thin(node: ast.Call, receiver: Value) -> Optional[bool]:
    """Whether ``t.expand(...)`` is still a 1 x N view: only where it keeps the rows axis as it
    was (``expand(heads, -1, -1)``), not where it sizes it (``expand(heads, n, -1)``)."""
    sizes = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List)) else node.args
    if len(sizes) < 2 or any(isinstance(size, ast.Starred) for size in sizes):
        return False
    rows = sizes[-2]
    kept = isinstance(rows, ast.UnaryOp) and isinstance(rows.op, ast.USub) and isinstance(rows.operand, ast.Constant) \
        and rows.operand.value == 1 or isinstance(rows, ast.Constant) and rows.value == 1
    return receiver.thin if kept else False


def _scaled_past_exact(op: ast.operator, left: Value, right: Value, value: Value) -> bool:
    """Whether ``value``, a 16-bit tensor of numbers its dtype held exactly, was scaled or shifted
    by a literal past the whole numbers that dtype holds, into numbers it rounds (``guidance *
    1000.0`` in bfloat16: 6000 becomes 6016): the arithmetic rounds what the cast did not."""
    origin = value.origin
    if not (value.is_tensor and value.prec.may_be_16bit and origin is not None and origin.exact):
        return False
    float16 = origin.float16
    for side, other in ((left, right), (right, left)):
        number = _const_number(other)
        if number is None or number == 0 or not side.is_tensor:
            continue
        bound = _whole_bound(side)
        if bound is None:
            # numbers it does not bound, times a literal past the exact range: only a power of two
            # keeps them exact
            return isinstance(op, ast.Mult) and abs(number) > _exact_up_to(float16) \
                and math.frexp(abs(number))[0] != 0.5
        results = [r for k in range(-bound, bound + 1) for r in [_combined(op, float(k), number, side is left)]
                   if r is not None]
        return any(_rounds_past_exact(r, float16) for r in results)
    return False


def _combined(op: ast.operator, a: float, b: float, a_first: bool) -> Optional[float]:
    """``a op b`` (or ``b op a``) for +, -, * and a division by a literal."""
    x, y = (a, b) if a_first else (b, a)
    if isinstance(op, ast.Mult):
        return x * y
    if isinstance(op, ast.Add):
        return x + y
    if isinstance(op, ast.Sub):
        return x - y
    if isinstance(op, ast.Div) and a_first:
        return x / y
    return None


def _exact_up_to(float16: bool) -> int:
    return FP16_EXACT_UP_TO if float16 else BF16_EXACT_UP_TO


def _rounds_past_exact(number: float, float16: bool = False) -> bool:
    """Whether a 16-bit dtype moves ``number``, past the whole numbers it holds exactly."""
    rounded = series_ops.fp16(number) if float16 else series_ops.bf16(number)
    return abs(number) > _exact_up_to(float16) and rounded != number


def _one_value(value: Value) -> Optional[float]:
    """The number a tensor of one value holds, where the code fixes it (ones, a literal fill)."""
    if value.payload_key == "ones":
        return 1.0
    if value.payload_key == ONE_VALUE and isinstance(value.payload, (int, float)):
        return float(value.payload)
    return None


def _whole_bound(value: Value) -> Optional[int]:
    """The largest magnitude of a whole-valued tensor of known bound, or of a whole literal."""
    if value.is_tensor:
        whole = value.prec is Prec.INT or value.whole
        return value.extent - 1 if whole and value.extent is not None else None
    number = _const_number(value)
    return abs(int(number)) if number is not None and float(number).is_integer() else None


def _part_binding(node: ast.AST) -> Tuple[Optional[str], Optional[str]]:
    """(part, whole) where ``node`` binds a name to a part of another name's tensor: ``for row in
    ids``, ``for i, row in enumerate(ids)``, ``row = ids[i]``, ``row = ids``; else (None, None)."""
    if isinstance(node, ast.For):
        target, source = node.target, node.iter
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id == "enumerate" \
                and len(source.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            target, source = target.elts[1], source.args[0]
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, source = node.targets[0], node.value
        source = source.value if isinstance(source, ast.Subscript) else source
    else:
        return None, None
    if isinstance(target, ast.Name) and isinstance(source, ast.Name) and target.id != source.id:
        return target.id, source.id
    return None, None


def _written_into(current: Value, value: Value) -> Value:
    """``current`` after ``value`` is written into part of it: it holds both. Cos/sin of its own
    angles written back over them (``pe[:, 0::2] = torch.sin(pe[:, 0::2])``, the other half likewise)
    leave values, not angles."""
    roles = current.roles
    if value.has(Role.TRIG) and not value.has(Role.ANGLES) and value.recent & current.recent:
        roles = roles - {Role.ANGLES}
    # zeros with a tensor written into part of them (``t = zeros(d); t[:k] = inv_freq``) hold that
    # table; Python numbers written in (a 0/1 mask, a loop's distances) leave them as they were read
    filled = dict(payload_key=None, payload=None, axes=value.axes) if current.payload_key in ONE_VALUE_KEYS \
        and value.is_tensor and not _holds_one_value(value) else {}
    # A position grid written into a slice of a tensor that holds another (``ids[..., 1] = arange(h)[:, None]``,
    # then ``ids[..., 2] = ids[..., 2] + arange(w)[None, :]``) adds an axis: the coordinates of a 2-D grid.
    if current.has(Role.POSITIONS) and value.has(Role.POSITIONS) and current.grids and value.grids - current.grids:
        filled["axes"] = (current.axes or 1) + 1
    return current.with_(**filled, roles=roles | value.roles, products=current.products | value.products,
                         recent=current.recent | value.recent, grids=current.grids | value.grids,
                         relative=value.relative if value.roles else current.relative)


def _literal_numbers(data: Value) -> Optional[List[float]]:
    """The numbers of a literal number, or of a literal list or tuple of them; None otherwise."""
    items = data.payload if data.sort is Sort.TUPLE and isinstance(data.payload, tuple) else (data,)
    numbers = [_const_number(v) if isinstance(v, Value) else None for v in items]
    return None if None in numbers else numbers


def _boolean(like: Value) -> Value:
    """The result of a test (``isnan(x)``, ``a < b``): a bool tensor, 0 or 1, shaped like ``like``."""
    return tensor(Prec.INT, extent=2, ndim=like.ndim if like.is_tensor else None)


def _arange_bounds(args: List[Value], kwargs: Dict[str, Value]) -> Optional[Tuple[int, int, int]]:
    """``start, end, step`` of an ``arange(...)`` of literal (or folded) whole bounds, else None
    (``arange(0., width)``: float bounds of whole values give the same integers)."""
    def given(i: int, name: str, default: Optional[int]) -> Optional[int]:
        if i < len(args):
            return _const_whole_value(args[i])
        return _const_whole_value(kwargs[name]) if name in kwargs else default

    if len(args) == 1 and "end" not in kwargs:
        start, end = 0, _const_whole_value(args[0])
    else:
        start, end = given(0, "start", 0), given(1, "end", None)
    step = given(2, "step", 1)
    if start is None or end is None or not step:
        return None
    return start, end, step


def _arange_interval(args: List[Value], kwargs: Dict[str, Value]) -> Optional[Tuple[float, float]]:
    """The range of an ascending ``arange`` of a literal (or folded) start, unbounded above where its
    end is not literal (``arange(0.5, n)``: from 0.5)."""
    if len(args) == 1 and "end" not in kwargs:
        start: Optional[float] = 0.0
    else:
        start = _const_number(args[0]) if args else _const_number(kwargs["start"]) if "start" in kwargs else 0.0
    step = _const_number(args[2]) if len(args) > 2 else _const_number(kwargs["step"]) if "step" in kwargs else 1
    return (float(start), math.inf) if start is not None and step is not None and step > 0 else None


def _fractional_arange(args: List[Value], kwargs: Dict[str, Value]) -> Optional[series_ops.Series]:
    """The values of an ``arange`` of literal (or folded) bounds some of which are fractional."""
    numbers = [_const_number(v) for v in args] + [_const_number(kwargs[k]) for k in ("start", "end", "step")
                                                   if k in kwargs]
    if len(args) == 1 and len(numbers) == 1:
        numbers = [0.0] + numbers
    if None in numbers or not 2 <= len(numbers) <= 3:
        return None
    return series_ops.stepped(*numbers) if len(numbers) == 3 else series_ops.stepped(numbers[0], numbers[1], 1.0)


def _arange_extent(bounds: Optional[Tuple[int, int, int]]) -> Optional[int]:
    """One more than the largest magnitude an ``arange`` of these bounds holds (``arange(12, -1,
    -1)``: 13; ``arange(-n, n)``: n + 1), else None."""
    if bounds is None:
        return None
    start, end, step = bounds
    last = end - 1 if step > 0 else end + 1
    empty = end <= start if step > 0 else end >= start
    return 1 if empty else max(abs(start), abs(last)) + 1


def _own_state(value: Value, node: Optional[ast.AST]) -> bool:
    """A floating tensor of no known role that the module holds: a buffer or parameter, or a plain
    attribute read as such (``self.proj.to(x.device)``)."""
    return module_state(value) or value.is_tensor and not value.roles and value.prec is not Prec.INT \
        and _reads_own_attribute(node) and not (value.origin is not None and value.origin.cast)


def _alternatives(node: ast.AST) -> List[ast.AST]:
    """The expressions a conditional expression may give (``a if c else b``: a and b)."""
    if isinstance(node, ast.IfExp):
        return _alternatives(node.body) + _alternatives(node.orelse)
    return [node]


def _reads_own_attribute(node: Optional[ast.AST]) -> bool:
    """Whether ``node`` reads an attribute of the instance, through casts, views, transposes and
    indexing (``self.phases.to(torch.float32)[None]``, ``self.proj.T``)."""
    while isinstance(node, (ast.Call, ast.Subscript)) or isinstance(node, ast.Attribute) and node.attr in TRANSPOSES:
        node = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            else node.value if isinstance(node, (ast.Subscript, ast.Attribute)) else None
    return node is not None and is_self_attr(node)


TRANSPOSES = frozenset({"T", "mT"})  # (views of the same numbers)


def _names_one_literal(function: Optional[FunctionInfo], name: str) -> bool:
    """Whether ``name`` in ``function`` holds one string whatever runs: a parameter with no
    default (its caller's argument), or a local assigned once, to a literal."""
    if function is None or isinstance(function.node, ast.Lambda):
        return False
    spec = function.node.args
    positional = spec.posonlyargs + spec.args
    required = [a.arg for a in positional[:len(positional) - len(spec.defaults)]]
    required += [a.arg for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is None]
    if name in required:
        return True
    assigned = _assigned_once(function.node, name)
    return isinstance(assigned, ast.Constant) and isinstance(assigned.value, str)


def _assigned_once(scope: ast.AST, name: str) -> Optional[ast.AST]:
    """The expression ``name`` is bound to in ``scope`` where one plain assignment is its only
    binding (``side = n // 14``); None for a parameter or a name bound more than once."""
    stores = [n for n in walk(scope) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    assigned = [a.value for a in walk(scope) if isinstance(a, ast.Assign) and len(a.targets) == 1
                and isinstance(a.targets[0], ast.Name) and a.targets[0].id == name]
    return assigned[0] if len(stores) == 1 and len(assigned) == 1 else None


def _descends_from_zero(args: List[Value], kwargs: Dict[str, Value]) -> bool:
    """Whether ``arange``'s arguments start at zero (or below) and step down by a literal."""
    start = args[0] if len(args) >= 2 else kwargs.get("start")
    step = args[2] if len(args) >= 3 else kwargs.get("step")
    first, stride = (_const_number(v) if v is not None else None for v in (start, step))
    return first is not None and first <= 0 and stride is not None and stride < 0


def _const_number(value: Value) -> Optional[float]:
    """A literal (or folded) Python int or finite float, else None."""
    key = value.payload_key
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "const" and type(key[1]) in (int, float) \
            and math.isfinite(key[1]) and abs(key[1]) < 1 << 40:
        return key[1]
    return None


def _folded(op: ast.operator, left: Value, right: Value):
    """The payload of a Python integer expression of literals (``16 * 16``, ``224 // 14``), or of
    arithmetic of literal numbers (``8192 * 16.0``, a length times a scaling factor; ``1 - 1e-5``)."""
    a, b = _const_int_value(left), _const_int_value(right)
    if isinstance(op, (ast.Mult, ast.Add, ast.Sub, ast.Div)) and (a is None or b is None or isinstance(op, ast.Div)):
        # floats: ``8192 * 16.0``, ``1 - 1e-5``, ``10 / 2``
        x, y = _const_number(left), _const_number(right)
        if x is None or y is None or (isinstance(op, ast.Div) and not y):
            return None
        value = {ast.Mult: x * y, ast.Add: x + y, ast.Sub: x - y}.get(type(op)) if not isinstance(op, ast.Div) \
            else x / y
        return ("const", value) if abs(value) < 1 << 40 else None
    if a is None or b is None:
        return None
    if isinstance(op, ast.Add):
        result = a + b
    elif isinstance(op, ast.Sub):
        result = a - b
    elif isinstance(op, ast.Mult):
        result = a * b
    elif isinstance(op, ast.FloorDiv) and b:
        result = a // b
    else:
        return None
    return ("const", result) if abs(result) < 1 << 40 else None


def _number_like(value: Value) -> bool:
    """An unknown value that nothing shows to be a tensor: it may well be a Python number (one
    computed from such numbers too: ``d_model // 2``)."""
    return value.payload_key == NUMBER_LIKE.payload_key or (_is_opaque(value) and _carried_kind(value) != "tensor")


def _carried_kind(value: Value) -> Optional[str]:
    key = value.payload_key
    return key[2] if isinstance(key, tuple) and len(key) >= 3 and key[0] == "param" else None


def _is_qual(value: Value) -> bool:
    return isinstance(value.payload_key, tuple) and len(value.payload_key) == 2 and value.payload_key[0] == "qual"


def _promoted_dtype(a: Value, b: Value, node: ast.AST) -> Value:
    """``torch.promote_types(a, b)``: float64 beside anything is float64; float32 beside a 16-bit or
    unknown floating dtype is at least float32 (float64 if that one is: float32 or better either way)."""
    if a.sort is not Sort.DTYPE or b.sort is not Sort.DTYPE:
        return dtype_value(Prec.UNKNOWN)
    for wide in (Prec.F64, Prec.F32):
        if wide in (a.prec, b.prec):
            return dtype_value(wide, Origin.at(node, f"torch.promote_types(..., {wide.value})", wide))
    if a.prec is Prec.INT:  # an integer dtype beside a floating one: the floating one
        return b
    return a if b.prec is Prec.INT or a == b else dtype_value(Prec.UNKNOWN)


def _float16(name: str) -> bool:
    return name.rsplit(".", 1)[-1] in FLOAT16_NAMES


def _spread(call: ast.Call, args: Sequence[Value]) -> List[Value]:
    """The positional arguments of ``call`` with each ``*xs`` of a tuple of known elements spread
    into them (as the call passes them to a function of the project)."""
    spread: List[Value] = []
    for node, value in zip(call.args, args):
        if isinstance(node, ast.Starred) and value.sort is Sort.TUPLE and isinstance(value.payload, tuple) \
                and value.payload_key != MODULE_LIST_KEY:
            spread.extend(value.payload)
        else:
            spread.append(value)
    return spread + list(args[len(call.args):])


def _same_single_axis(a: Value, b: Value) -> bool:
    """Two 1-D tensors along the same axis: their product is elementwise, not an outer product."""
    return a.is_tensor and b.is_tensor and a.ndim == b.ndim == 1 and a.axis is not None and a.axis == b.axis


def _is_parameter(value: Value) -> bool:
    key = value.payload_key
    return isinstance(key, tuple) and key[0] == "param"


def merge_all(values: Iterable[Value]) -> Value:
    values = list(values)
    if not values:
        return UNKNOWN
    out = values[0]
    for v in values[1:]:
        out = merge(out, v)
    return out


def _contracts(name: str, node: ast.Call) -> bool:
    """Whether the matrix product ``name`` at ``node`` sums over an axis: every one but an outer
    product (``outer``, ``einsum("i,j->ij", ...)``); an einsum whose pattern is not a literal is taken for none."""
    if name in ("outer", "ger"):
        return False
    if name != "einsum":
        return True
    return bool(_summed_indices(node))


def _einsum_pattern(node: ast.Call) -> Optional[str]:
    return next((a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)), None)


def _einsum_axes(node: ast.Call) -> Optional[Tuple[List[List[str]], Optional[List[str]]]]:
    """Each operand's axes and the output's (None where torch's output is implicit) as an einsum's
    literal pattern names them. torch's pattern comes first and names each axis by a letter;
    einops' comes last and names them by words (``"b n d, d f -> b n f"``); ``...`` names none."""
    pattern = _einsum_pattern(node)
    if pattern is None:
        return None
    inputs, arrow, output = pattern.partition("->")
    words = bool(node.args) and isinstance(node.args[-1], ast.Constant) and node.args[-1].value == pattern \
        and not (isinstance(node.args[0], ast.Constant) and node.args[0].value == pattern)

    def axes(text: str) -> List[str]:
        text = text.replace("...", " ")
        return text.split() if words else [c for c in text if c.isalpha()]

    return [axes(part) for part in inputs.split(",")], (axes(output) if arrow else None)


def _einsum_raises(node: ast.Call, values: Sequence[Value]) -> bool:
    """Whether an einsum's literal pattern names, for an operand of known rank, another number of
    axes (``"bd,dd->bd"`` of a vector of frequencies): torch raises before computing anything."""
    parsed, pattern = _einsum_axes(node), _einsum_pattern(node)
    if parsed is None or pattern is None:
        return False
    parts = pattern.partition("->")[0].split(",")
    return len(parts) == len(values) and any(
        "..." not in part and value.is_tensor and value.ndim is not None and value.ndim != len(axes)
        for part, axes, value in zip(parts, parsed[0], values))


def _summed_indices(node: ast.Call) -> Set[str]:
    """The indices an einsum sums over: c and x of ``"bcx,ocx->box"``; with torch's implicit
    output, the indices that appear more than once."""
    parsed = _einsum_axes(node)
    if parsed is None:
        return set()
    operands, output = parsed
    letters = [axis for axes in operands for axis in axes]
    if output is None:
        return {c for c in letters if letters.count(c) > 1}
    return set(letters) - set(output)


def _channel_operand(op: str, node: ast.AST) -> Optional[int]:
    """Which of two operands gives the last axis of a product that sums over nothing: outer's
    second; an einsum's by its output (``"..., f -> ... f"``: the second; ``"j,i->ij"``: the first)."""
    if op in ("outer", "ger"):
        return 1
    parsed = _einsum_axes(node) if op == "einsum" and isinstance(node, ast.Call) else None
    if parsed is None or not parsed[1] or len(parsed[0]) != 2 or set(parsed[0][0] + parsed[0][1]) - set(parsed[1]):
        return None  # (no output written, or an axis summed over)
    holders = [i for i, axes in enumerate(parsed[0]) if parsed[1][-1] in axes]
    return holders[0] if len(holders) == 1 else None


def _einops_axes(pattern: str, value: Value) -> Dict[str, Optional[int]]:
    """``ndim`` and ``axis`` after ``rearrange``/``repeat`` of a 1-D ``value`` by ``pattern``
    (``"j -> 1 1 j"``: 3 dimensions, the values along the last; ``"i -> 1 i 1"``: along the second
    to last), so that ``rearrange(j, ...) - rearrange(i, ...)`` is a key-minus-query difference as
    the same broadcast by indexing is; unknown (None) for a pattern this does not read."""
    left, arrow, right = pattern.partition("->")
    names, output = left.split(), right.split()
    if not arrow or value.ndim != 1 or len(names) != 1 or "(" in right or output.count(names[0]) != 1:
        return dict(ndim=None, axis=None)
    return dict(ndim=len(output), axis=output.index(names[0]) - len(output))


def _shared_grid_variable(pos_node: ast.AST, factor_node: ast.AST, frame: Frame) -> bool:
    """Whether both operands are computed from one grid variable (``index * base ** (-index / d)``,
    the derivative of the frequencies with respect to their scale): no position enters then."""
    def grid_names(node: ast.AST) -> Set[str]:
        return {name for name in _value_names(node) if name in frame.env and is_grid(frame.env[name])}
    return bool(grid_names(pos_node) & grid_names(factor_node))


def _value_names(node: ast.AST) -> Set[str]:
    """The names whose values ``node`` computes with: not those it only asks for a device, dtype
    or shape (``inv_freq.to(positions.device)`` computes with ``inv_freq`` alone)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute) and node.attr in METADATA_ATTRIBUTES:
        return set()
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in METADATA_CALLS:
        return _value_names(node.func.value)
    return set().union(*(_value_names(child) for child in ast.iter_child_nodes(node)))


def _retagged_grids(value: Value, handed: frozenset, site: tuple, grid_ends: Dict[tuple, str]) -> Value:
    """``value`` (and the elements of a tuple) with the grids not in ``handed`` keyed by ``site``
    too; ``grid_ends`` learns the new keys' ends."""
    if value.sort is Sort.TUPLE and isinstance(value.payload, tuple):
        parts = tuple(_retagged_grids(part, handed, site, grid_ends) for part in value.payload)
        return value if parts == value.payload else value.with_(
            payload=parts, payload_key=parts if value.payload_key == value.payload else value.payload_key)
    made = value.grids - handed
    if not made:
        return value
    for grid in made:
        if grid in grid_ends:
            grid_ends[grid + site] = grid_ends[grid]
    return value.with_(grids=(value.grids & handed) | {grid + site for grid in made})


def _stored_on_self(env: Dict[str, Value]) -> Dict[str, Value]:
    return {name: value for name, value in env.items() if name.startswith("self.")}


def _stored_on_part(env: Dict[str, Value], part: Optional[ast.AST]) -> Optional[Dict[str, Value]]:
    """What ``env``'s frame stored in the attributes of ``part`` (``self.rotary``), as the part's
    own ``self.<attr>``."""
    if not is_self_attr(part):
        return None
    prefix = f"self.{part.attr}."
    return {f"self.{name[len(prefix):]}": value for name, value in env.items() if name.startswith(prefix)} or None


def _stored_on_every_path(exits: List[Dict[str, Value]], incoming: Dict[str, Value]) -> Dict[str, Value]:
    """What a method stored in ``self.<attr>`` on every way out of it (merged), beyond what it was given."""
    if not exits:
        return {}
    stored = {}
    for name in set.intersection(*(set(e) for e in exits)):
        values = [e[name] for e in exits]
        if any(v is not incoming.get(name) for v in values):
            stored[name] = merge_all(values)
    return stored


def _integer_pieces(parts: Sequence[Value]) -> Optional[Value]:
    """The pieces of one mask or index tensor: integer or boolean pieces beside pieces of unknown
    dtype (``cat([input_mask, ones(n, dtype=bool)])``) are taken for more of the same, not for
    activations (a floating piece would make the whole floating); else None."""
    known = [p for p in parts if p.prec is not Prec.UNKNOWN]
    if known and len(known) < len(parts) and all(p.is_tensor and p.prec is Prec.INT for p in known):
        return merge_all(known)
    return None


def _other_device_test(test: ast.Compare) -> Optional[bool]:
    """``t.device.type == "mps"`` (or ``!=``, ``in``, ``not in`` a tuple of such types): a test that a
    device is of a type other than CUDA or the CPU, settled as on those two; else None."""
    if len(test.ops) != 1 or not (isinstance(test.left, ast.Attribute) and test.left.attr == "type"):
        return None
    right = test.comparators[0]
    names = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
    if not names or not all(isinstance(n, ast.Constant) and n.value in OTHER_DEVICE_TYPES for n in names):
        return None
    op = test.ops[0]
    if isinstance(op, (ast.Eq, ast.In)):
        return False
    return True if isinstance(op, (ast.NotEq, ast.NotIn)) else None


def _grown_list(container: Value, added: Value, extend: bool) -> Value:
    """A list after ``append``, ``insert`` or ``extend`` of ``added``: it gains the numeric roles
    of what was added, and a list of tensors keeps what its elements are, merged (the pieces that a
    later ``cat`` joins: boolean pieces beside unknown ones make a boolean mask)."""
    roles = container.roles | (added.roles & {Role.SLOPES, Role.FREQS, Role.POW2})
    if container.sort is Sort.TUPLE and isinstance(container.payload, tuple):
        elements = container.payload  # a literal list, ``[]`` included
    elif _is_list_of(container) and isinstance(container.payload, Value):
        elements = (container.payload,)
    else:
        return Value(sort=Sort.OTHER, roles=roles)
    element = _element_of(added) if extend else added
    merged = _integer_pieces(elements + (element,)) or merge_all(elements + (element,))
    if merged.is_tensor:  # one piece filled with one value does not make the whole list a constant
        merged = merged.with_(payload=None, payload_key=None, extent=None, ndim=None, axis=None)
    elif merged.sort is not Sort.OTHER or merged.roles:
        return Value(sort=Sort.OTHER, roles=roles)
    return Value(sort=Sort.OTHER, roles=roles | merged.roles, prec=merged.prec, payload=merged,
                 payload_key=("list-of", merged.sort.value, merged.roles, merged.products, merged.recent))


def _filled_only(value: Value) -> bool:
    """Made of ``full(shape, x)`` fills with no grid added: the same value along every axis."""
    return ONE_VALUE_FILL in value.products and not value.grids


def _same_name(target: ast.AST, node: ast.AST) -> bool:
    """Whether an assignment's ``target`` binds what ``node`` reads: one local, or one ``self.<attr>``."""
    if isinstance(target, ast.Name) and isinstance(node, ast.Name):
        return target.id == node.id
    return is_self_attr(target) and is_self_attr(node) and target.attr == node.attr


def _combined_products(left: Value, right: Value) -> frozenset:
    """What an operation's result is computed from; fixed by the module's constants only where
    neither operand brings anything else (a constant table times an input is not one)."""
    merged = left.products | right.products
    if MODULE_CONSTANT in merged and not all(MODULE_CONSTANT in v.products or v.is_number for v in (left, right)):
        merged -= {MODULE_CONSTANT}
    return merged


def _holds_one_value(value: Value) -> bool:
    """A tensor filled with one exact value (zeros, ones, ``full(shape, 6)``), and its casts and
    reshapes: whatever its dtype, nothing in it collides or is rounded."""
    return value.is_tensor and value.payload_key in ONE_VALUE_KEYS


def _imported_here(name: str, frame: Frame) -> bool:
    """Whether ``name`` means what the module's imports say: unbound in the frame, or bound by an
    import statement the frame ran (``import torch`` inside a function)."""
    value = frame.env.get(name)
    return value is None or value.payload_key is IMPORT_BOUND_KEY


def _holds_host_part(fact, host: ModuleFacts) -> bool:
    """Whether a fact recorded in another module holds a node of the linted file: one of its
    nodes, or where one of its values got its precision."""
    for part in vars(fact).values():
        if isinstance(part, ast.AST) and host.holds(part):
            return True
        if isinstance(part, Value) and _value_holds(part, host):
            return True
    return False


def _value_holds(value: Value, host: ModuleFacts) -> bool:
    for origin in (value.origin, value.rounded):
        if origin is not None and host.holds(origin.node):
            return True
    return value.sort is Sort.TUPLE and isinstance(value.payload, tuple) and \
        any(isinstance(v, Value) and _value_holds(v, host) for v in value.payload)


def _held_instance(classes: Sequence[ClassInfo]) -> Value:
    """An instance of one of ``classes`` (an attribute set by a factory: either), or UNKNOWN."""
    return _joined([Value(sort=Sort.INSTANCE, payload=c, payload_key=c.name) for c in classes])


def _channel_vector(value: Value) -> bool:
    """A vector along the last axis (1-D, or every other dim of size 1): in a product with a tensor
    of more dimensions, it runs along that tensor's last axis."""
    return value.axis == -1 and (value.ndim == 1 or bool(value.thin))


# The longest tuple whose comprehension is evaluated element by element.
MAX_UNROLLED = 16

# Products that keep their operands' axes (broadcasting), unlike matrix products and einsum.
ELEMENTWISE_PRODUCTS = frozenset({"*", "mul", "multiply"})


def _over_wavelength_operands(op: ast.operator, left: Value, right: Value) -> bool:
    """A quotient that may be angles, an input over each channel's wavelength: a tensor of no known
    role and made from no grid (a grid normalised by its total is bounded) over a table the module
    holds (a buffer or parameter, which conversion rounds), or over a tensor not yet known (the
    first round reads no module attribute), so that a sink can confirm it as a product. (A table
    computed in place in the input's dtype, DETR's ``x / dim_t`` of normalised coordinates, moves
    each angle by its relative rounding only.) A wavelength table in the default dtype counts
    too: made at construction, a 16-bit default rounds it for good, whatever holds it."""
    return isinstance(op, ast.Div) and unknown_operand(left) and not left.grids and (
        held_by_module(right) or unknown_operand(right)
        or right.is_tensor and right.has(Role.GROWTH) and right.prec is Prec.DEFAULT)


def _along_dims(grid: Value, other: Value, dims: Iterable[int]) -> bool:
    """Whether ``grid``, laid out along one axis of several that is not the first
    (``orders[None, :, None, None]``), varies along one of ``dims`` (as ``cat`` takes them) of its
    product with ``other``; a dim counted from the front needs the product's rank: the grid's,
    where ``other`` has no more dims. (A 1-D grid, or one along the first axis, may be a sequence
    that cos and sin are concatenated along.)"""
    if grid.axis is None or grid.ndim is None or grid.ndim < 2 or grid.axis == -grid.ndim:
        return False
    rank = grid.ndim if other.ndim is None or other.ndim <= grid.ndim else None
    return any(dim == grid.axis if dim < 0 else rank is not None and dim - rank == grid.axis for dim in dims)


def _written_as(node: ast.AST, frame: Frame) -> ast.AST:
    """The expression a local name stands for where its function assigns it once (``coords =
    x.unsqueeze(-1)``), so that a temporary reads as what it holds; else the node itself."""
    function = frame.function
    if not isinstance(node, ast.Name) or function is None or isinstance(function.node, ast.Lambda):
        return node
    return _assigned_once(function.node, node.id) or node


def _vector_along_last(grid: Value, other_node: ast.AST, dims: Iterable[int]) -> bool:
    """A 1-D grid times an operand given a last axis of one (``x.unsqueeze(-1)``, ``x[..., None]``),
    with cos and sin concatenated along the last axis: the grid runs along the channels."""
    if not (grid.ndim == 1 and -1 in tuple(dims)):
        return False
    while isinstance(other_node, ast.BinOp) and isinstance(other_node.op, (ast.Mult, ast.Div)):
        # scaled by literals first (``2 * math.pi * x.unsqueeze(-1)``): the same axes
        if _literal_scale(other_node.left) and not isinstance(other_node.op, ast.Div):
            other_node = other_node.right
        elif _literal_scale(other_node.right):
            other_node = other_node.left
        else:
            break
    if isinstance(other_node, ast.Call) and isinstance(other_node.func, ast.Attribute) \
            and other_node.func.attr == "unsqueeze" and len(other_node.args) == 1:
        return _const_int(other_node.args[0]) == -1
    if isinstance(other_node, ast.Subscript):
        parts = other_node.slice.elts if isinstance(other_node.slice, ast.Tuple) else [other_node.slice]
        return len(parts) > 1 and isinstance(parts[-1], ast.Constant) and parts[-1].value is None
    return False


def _literal_scale(node: ast.AST) -> bool:
    """A number written in the code: a literal, a constant of ``math``/``numpy``/``torch``
    (``math.pi``), or a product of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.Attribute):
        return node.attr in ("pi", "tau", "e") and isinstance(node.value, ast.Name) \
            and node.value.id in ("math", "np", "numpy", "torch")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        return _literal_scale(node.left) and _literal_scale(node.right)
    return False


def _along_channels(value: Value) -> bool:
    """A grid that may vary along the last axis itself (a product with a vector is elementwise)."""
    return value.axis == -1 or value.ndim == 1


def _joined(values: Sequence[Value]) -> Value:
    """The join of what each of several alternatives gives."""
    return functools.reduce(merge, values) if values else UNKNOWN


def _growing(value: Value) -> bool:
    """A tensor of ``base ** index`` with a non-negative exponent (no inversion since)."""
    return value.is_tensor and (value.has(Role.GROWTH) or value.has(Role.GROWTH2))


def _exact_fill(fill: Optional[Value]) -> bool:
    """A literal fill that every floating dtype holds exactly (an integer up to 256)."""
    number = _const_number(fill) if fill is not None else None
    return number is not None and float(number).is_integer() and abs(number) <= 256


def _concatenated(parts: Sequence[Value], stacked: bool = False) -> Value:
    """``cat``/``stack`` of ``parts``: roles merge, and the dtype follows type promotion, so a
    float32 part makes the result float32 (the 16-bit parts stay rounded). A part filled with one
    value (a zero appended to a timestep) adds no values to round: the others decide. Stacked position grids
    with nothing in common (``stack([x, y], -1)``) are the coordinates of a grid with that many axes."""
    mask = _integer_pieces(parts)
    if mask is not None:
        return mask.with_(ndim=None, axis=None)
    varied = [p for p in parts if not _holds_one_value(p)]
    parts = varied if varied and len(varied) < len(parts) else parts
    shapes = {(p.ndim, p.axis) for p in parts}
    # A concatenation keeps the rank, and the varying axis where every part has the same one.
    ndim, axis = next(iter(shapes)) if not stacked and len(shapes) == 1 else (None, None)
    merged = merge_all(parts).with_(ndim=ndim, axis=axis)
    groups = {p.grids for p in parts if p.grids and p.has(Role.POSITIONS)}
    if stacked and len(groups) > 1 and not any(a & b for a, b in itertools.combinations(groups, 2)):
        merged = merged.with_(axes=len(groups))
    tensors = [p for p in parts if p.is_tensor]
    for prec in (Prec.F64, Prec.F32):
        widest = next((p for p in tensors if p.prec is prec), None)
        if widest is not None:
            # A part with no role (zeros as a constant axis) holds nothing that can collide.
            low = next((p.lost_precision() for p in tensors if p.roles and p.lost_precision() is not None), None)
            return merged.with_(prec=prec, origin=widest.origin, rounded=low)
    return merged


def _unpacked(elements: Tuple[Value, ...], value_node: Optional[ast.AST], index: int, count: int,
              star: int) -> Value:
    """The element that target ``index`` of ``count`` (a starred one at ``star``) takes from a tuple
    of ``elements``, whose own starred element (in ``value_node``), if any, has an unknown length."""
    parts = value_node.elts if isinstance(value_node, (ast.Tuple, ast.List)) else ()
    spread = next((i for i, part in enumerate(parts) if isinstance(part, ast.Starred)), None)
    if index < star:
        known = len(elements) if spread is None else spread
        return elements[index] if index < known else UNKNOWN
    from_end = count - index
    known = len(elements) if spread is None else len(elements) - spread - 1
    return elements[-from_end] if from_end <= known else UNKNOWN


def _only_slices(index: ast.AST) -> bool:
    """``t[..., 0::2]``, ``t[:, :n]``: slices (and ``...``/``None``) only, no index that selects."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and p.value in (None, Ellipsis))
               for p in parts)


def _shifted_per_row(target: ast.Subscript, value_node: Optional[ast.AST]) -> bool:
    """Whether ``target[i, ...] = grid[start(i):]`` writes into row ``i`` a window of a grid whose
    start moves with ``i`` (a Toeplitz fill, row by row): each row the grid shifted by its index.
    (Not ``grid[:i + 1]`` or ``grid[i, :i + 1]``: the same start for every row, absolute values.)"""
    index = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    row = index[0] if index and isinstance(index[0], ast.Name) else None
    if row is None or not isinstance(value_node, ast.Subscript):
        return False

    def uses_row(node: Optional[ast.AST]) -> bool:
        return node is not None and any(isinstance(n, ast.Name) and n.id == row.id for n in ast.walk(node))

    source = value_node.slice.elts if isinstance(value_node.slice, ast.Tuple) else [value_node.slice]
    return any(isinstance(part, ast.Slice) and uses_row(part.lower) for part in source) \
        and not any(not isinstance(part, ast.Slice) and uses_row(part) for part in source)


def _split_part(name: str, whole: Value, args: Sequence[Value], kwargs: Dict[str, Value]) -> Value:
    """A part of ``whole`` that ``chunk``/``split``/``unbind`` hands back: each is ``whole`` (a table
    split into sections keeps its trace), but for single columns of the last axis
    (``boxes.split(1, dim=-1)``, ``unbind(-1)``): the fields of a record (a box's angle) say
    nothing of what the other columns came from."""
    dim = kwargs.get("dim", args[0] if name == "unbind" and args else args[1] if len(args) > 1 else None)
    size = None if name == "unbind" else args[0] if args else kwargs.get("split_size_or_sections",
                                                                          kwargs.get("split_size"))
    last = dim is not None and _const_number(dim) == -1
    columns = name == "unbind" or (name == "split" and size is not None and _const_number(size) == 1)
    return whole.with_(recent=frozenset()) if last and columns and whole.is_tensor else whole


def _selects_a_column(index: Value) -> bool:
    """``t[:, 6]``, ``t[..., yaw]`` with ``yaw = 6``: a fixed integer on the last axis written, after others."""
    return index.sort is Sort.TUPLE and isinstance(index.payload, tuple) and len(index.payload) > 1 \
        and _const_int_value(index.payload[-1]) is not None


def _element_of(iterated: Value) -> Value:
    if iterated.payload_key == PARAMETERS_HELD:  # a parameter of an ``nn.ParameterList``
        return iterated.with_(payload_key=None)
    if iterated.sort is Sort.TUPLE and isinstance(iterated.payload, tuple) and iterated.payload:
        return merge_all(iterated.payload)
    if isinstance(iterated.payload, Value) and _is_list_of(iterated):
        return iterated.payload
    return UNKNOWN


def _is_list_of(value: Value) -> bool:
    key = value.payload_key
    return isinstance(key, tuple) and bool(key) and key[0] == "list-of"


def _pairs(first: Value, iterated: Value) -> Value:
    """``enumerate(xs)`` / ``zip(a, xs)``: a sequence of (first, element) pairs."""
    pair = (first, _element_of(iterated))
    return Value(sort=Sort.TUPLE, payload=(Value(sort=Sort.TUPLE, payload=pair, payload_key=pair),),
                 payload_key=("pairs", pair))


def _describe(value: Value, src: str) -> str:
    if (value.prec is Prec.CONVERTED or (value.origin and value.origin.stored)) and value.origin:
        # ``x.to(self.inv_freq.dtype)`` is described by the buffer it follows, said once.
        return value.origin.reason.removeprefix("the dtype of ")
    return f"'{src}'" if len(src) <= 40 else "the operand"


def _index_axes(value: Value, index: ast.AST) -> Tuple[Optional[int], Optional[int]]:
    """Rank and varying axis of ``value[index]`` for a 1-varying-axis position grid."""
    if value.ndim is None or value.axis is None:
        return None, None
    elts = index.elts if isinstance(index, ast.Tuple) else [index]
    if any(_is_ellipsis(e) for e in elts):
        pos = next(i for i, e in enumerate(elts) if _is_ellipsis(e))
        after = elts[pos + 1:]
        if any(not _is_slice_or_none(e) for e in after):
            return None, None
        consumed_after = sum(1 for e in after if isinstance(e, ast.Slice))
        new_after = len(after)
        # ``t[(*(None,) * k, ...)]``: leading dims of a count the code computes; the axis from the end stays
        ndim = None if any(isinstance(e, ast.Starred) for e in elts[:pos]) else value.ndim - consumed_after + new_after
        if value.axis >= -consumed_after:
            # the varying axis is among the trailing sliced dims
            slices = [i for i, e in enumerate(after) if isinstance(e, ast.Slice)]
            k = slices[consumed_after + value.axis]
            return ndim, k - new_after
        return ndim, value.axis - (new_after - consumed_after)
    dims = []  # for each old dim: kept (new index) or None
    new_index = 0
    old = 0
    for e in elts:
        if isinstance(e, ast.Constant) and e.value is None:
            new_index += 1
        elif isinstance(e, ast.Slice):
            dims.append(new_index)
            new_index += 1
            old += 1
        else:
            dims.append(None)  # integer or tensor index: dim removed (or unknown)
            old += 1
            if not (isinstance(e, ast.Constant) and isinstance(e.value, int)) and not isinstance(e, ast.UnaryOp):
                return None, None
    while old < value.ndim:
        dims.append(new_index)
        new_index += 1
        old += 1
    vary_old = value.ndim + value.axis
    if vary_old < 0 or vary_old >= len(dims) or dims[vary_old] is None:
        return new_index, None
    return new_index, dims[vary_old] - new_index


def _is_ellipsis(e: ast.AST) -> bool:
    """``...``, or the builtin name that holds it (an index built as a tuple: ``(*nones, Ellipsis)``)."""
    return (isinstance(e, ast.Constant) and e.value is Ellipsis) or (isinstance(e, ast.Name) and e.id == "Ellipsis")


def _is_slice_or_none(e: ast.AST) -> bool:
    return isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is None)


def _broadcast_axes(a: Value, b: Value) -> Tuple[Optional[int], Optional[int]]:
    if all(v.ndim == 0 for v in (a, b) if v.is_tensor) and (a.is_tensor or b.is_tensor):
        return 0, None  # a zero-dimensional tensor with numbers (or another): still zero-dimensional
    grid = a if a.has(Role.POSITIONS) or a.has(Role.BIAS) else b
    other = b if grid is a else a
    if grid.ndim is None:
        return None, None
    if other.is_tensor and other.ndim is not None and other.ndim > grid.ndim:
        return other.ndim, grid.axis
    return grid.ndim, grid.axis


def _swapped(value: Value, first: int, second: int) -> Value:
    """``value`` with two of its dims swapped (``row.T``, ``row.transpose(0, 1)``): a grid varying
    along one of them varies along the other now (a row of key positions becomes a column, the
    queries' axis)."""
    if value.ndim is None or value.axis is None:
        return value.with_(axis=None) if value.axis is not None else value
    first, second, vary = (d % value.ndim for d in (first, second, value.axis))
    vary = second if vary == first else first if vary == second else vary
    return value.with_(axis=vary - value.ndim)


def _reshape_axes(name: str, value: Value, node: ast.Call, frame: Frame, interp) -> Tuple[Optional[int], Optional[int]]:
    if value.ndim is None or value.axis is None:
        return None, None
    args = node.args
    if name == "unsqueeze" and args and isinstance(args[0], (ast.Constant, ast.UnaryOp)):
        dim = _const_int(args[0])
        if dim is None:
            return None, None
        new_ndim = value.ndim + 1
        pos = dim if dim >= 0 else new_ndim + dim
        vary = value.ndim + value.axis
        vary_new = vary + 1 if pos <= vary else vary
        return new_ndim, vary_new - new_ndim
    if name in ("view", "reshape", "expand"):
        dims = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
        if not dims:
            return None, None
        if name == "expand":
            return len(dims), value.axis
        non_one = [i for i, d in enumerate(dims) if _const_int(d) != 1]
        if len(non_one) == 1:
            return len(dims), non_one[0] - len(dims)
        return len(dims), None
    return None, None


def _same_dtype_operands(a: Value, b: Value) -> Tuple[Value, Value]:
    """matmul, ``@``, mm and bmm do not promote: a float32 operand next to one that may be 16-bit
    raises unless both are float32 (or autocast lowers both, which POS103 reports). A run that gets
    past the product has the other operand in float32 too."""
    for wide, other in ((a, b), (b, a)):
        if wide.is_tensor and other.is_tensor and wide.prec in (Prec.F32, Prec.F64) and other.prec.may_be_16bit:
            # (where it came from stays: a module's weight is still the module's, of float32 now)
            narrowed = other.with_(prec=wide.prec, origin=replace(other.origin, prec=wide.prec)
                                   if other.origin is not None else wide.origin)
            return (wide, narrowed) if wide is a else (narrowed, wide)
    return a, b


def _literal_sides(args: List[Value]) -> Optional[Tuple[int, ...]]:
    """The sides of ``ones(2, 3)`` or ``ones((2, 3))`` when each is a literal (or folded) int."""
    dims = list(args[0].payload) if len(args) == 1 and args[0].sort is Sort.TUPLE and \
        isinstance(args[0].payload, tuple) else args
    sides = [_const_int_value(d) for d in dims]
    return tuple(sides) if sides and all(isinstance(side, int) and side >= 0 for side in sides) else None


def _transposed(node: ast.AST) -> bool:
    """``w.T``, ``w.mT``, ``w.t()``, ``w.transpose(...)``, ``w.permute(...)``: the sides swapped."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("T", "mT", "H", "mH")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr in ("t", "transpose", "permute", "swapaxes")


def _only_symmetric_grids(grid: Value, symmetric: Set[tuple]) -> bool:
    return bool(grid.grids) and grid.grids <= symmetric


def _symmetric_bounds(bounds: Sequence[ast.AST]) -> bool:
    """``arange(l, -l - 1, -1)``, ``arange(-n + 1, n)``: the two bounds are one name, of opposite signs."""
    def signed_name(node: ast.AST) -> Optional[Tuple[str, int]]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and isinstance(node.right, ast.Constant):
            node = node.left
        sign = 1
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node, sign = node.operand, -1
        return (node.id, sign) if isinstance(node, ast.Name) else None

    if len(bounds) != 2:
        return False
    first, second = signed_name(bounds[0]), signed_name(bounds[1])
    return first is not None and second is not None and first[0] == second[0] and first[1] != second[1]


def _matrix_rows(args: List[Value]) -> Optional[int]:
    """The first side of the matrix ``randn(rows, cols)`` (or ``randn((rows, cols))``) makes, where literal."""
    dims = list(args[0].payload) if len(args) == 1 and args[0].sort is Sort.TUPLE and \
        isinstance(args[0].payload, tuple) else args
    rows = _const_int_value(dims[0]) if len(dims) == 2 else None
    return rows if isinstance(rows, int) else None


def _count_extent(receiver: Value, args: List[Value], kwargs: Dict[str, Value]) -> Optional[int]:
    """The bound of a running count of ones of literal sides: the side it runs along, plus one."""
    sides = receiver.payload if receiver.payload_key == "ones" and isinstance(receiver.payload, tuple) else None
    if not sides:
        return None
    dim = _const_int_value(args[0]) if args else _const_int_value(kwargs.get("dim", UNKNOWN))
    if dim is not None and -len(sides) <= dim < len(sides):
        return sides[dim] + 1
    return max(sides) + 1


def _is_flag(default: Optional[ast.AST]) -> bool:
    return isinstance(default, ast.Constant) and isinstance(default.value, bool)


def _unsettled_flag(fn: FunctionInfo, env: Dict[str, Value]) -> Optional[str]:
    """The first parameter of ``fn`` with a ``True``/``False`` default that an ``if`` of its body
    tests (``if full:``, ``if not full:``) and that is bound to no known boolean here; None if none."""
    node = fn.node
    if isinstance(node, ast.Lambda):
        return None
    spec = node.args
    positional = spec.posonlyargs + spec.args
    defaults = dict(zip((a.arg for a in positional[len(positional) - len(spec.defaults):]), spec.defaults))
    defaults.update((a.arg, d) for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None)
    flags = {name for name, default in defaults.items() if _is_flag(default)
             and env.get(name) not in (TRUE_CONSTANT, FALSE_CONSTANT)}
    if not flags:
        return None
    for stmt in walk(node):
        if isinstance(stmt, ast.If):
            test = stmt.test.operand if isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) \
                else stmt.test
            if isinstance(test, ast.Name) and test.id in flags:
                return test.id
    return None


def _required_parameters_kept(init: ast.AST) -> Tuple[Set[str], Set[str]]:
    """A constructor's required parameters, and the ``self.<attr>`` it keeps one of them in as it is."""
    spec = init.args
    positional = [*spec.posonlyargs, *spec.args][1:]
    required = {a.arg for a in positional[:len(positional) - len(spec.defaults)]}
    required |= {a.arg for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is None}
    held = {target.attr for stmt in walk(init) if isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Name) and stmt.value.id in required
            for target in stmt.targets if is_self_attr(target)}
    return required, held


def _may_take_flags(init: ast.AST, cls: ast.ClassDef) -> bool:
    """Whether a constructor has a parameter whose default is True or False, or a required one
    that the class branches on (``if causal:``, or ``if self.causal:`` where ``self.causal =
    causal``): what the package's instantiations pass may settle it."""
    spec = init.args
    if any(_is_flag(d) for d in (*spec.defaults, *spec.kw_defaults)):
        return True
    required, held = _required_parameters_kept(init)
    if not required:
        return False

    def flags_in(test: ast.AST) -> bool:  # the test is the flag itself: ``x``, ``not x``, ``x and y``
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return flags_in(test.operand)
        if isinstance(test, ast.BoolOp):
            return any(flags_in(value) for value in test.values)
        return isinstance(test, ast.Name) and test.id in required or is_self_attr(test) and test.attr in held

    return any(flags_in(node.test) for node in walk(cls) if isinstance(node, (ast.If, ast.IfExp, ast.While)))


def _may_take_modules(init: ast.AST, cls: ast.ClassDef) -> bool:
    """Whether a constructor keeps a required parameter in ``self.<attr>`` that the class calls
    (``self.transformer = transformer``, then ``self.transformer(x, time=t)``): a module that the
    package's instantiations hand in."""
    _, held = _required_parameters_kept(init)
    return any(isinstance(node, ast.Call) and is_self_attr(node.func) and node.func.attr in held for node in walk(cls))


def _is_module(value: Value) -> bool:
    """A module of the project, a library's rotary module, or a container of modules."""
    return (value.sort is Sort.INSTANCE and isinstance(value.payload, (ClassInfo, Either))) or \
        isinstance(value.payload, (_LibraryRotary, _ModulesByName)) or value.payload_key == MODULE_LIST_KEY


def _is_literal(node: Optional[ast.AST]) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and not isinstance(node.value, (bytes, type(Ellipsis)))


def _const_int(node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int):
        return -node.operand.value
    return None
