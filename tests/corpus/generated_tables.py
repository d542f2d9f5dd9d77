"""Generated lookup tables: large, and nothing positional."""
TABLE = {
    "a": 1,
    "b": 2 ** 3,
    "c": [1, 2, 3],
}


def lookup(key, **options):
    return TABLE.get(key, options.get("default"))
