"""Runs tests/python with pytest against the pygguf built in a build tree (ctest's python.pytest)."""
import os
import sys


def main() -> int:
    build, tests = sys.argv[1], sys.argv[2]
    try:
        import pytest
    except ImportError:
        print(f"pytest is not installed for {sys.executable}: the Python tests are skipped")
        return 77
    sys.path.insert(0, build)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [build, os.environ.get("PYTHONPATH")]))
    return pytest.main(["-q", "-p", "no:cacheprovider", tests] + sys.argv[3:])


if __name__ == "__main__":
    sys.exit(main())
