"""The binding's version: the version of the mlprof project it belongs to
(CMakeLists.txt's project() version; tests/python/test_binding.py checks
that they agree). Read by pyproject.toml without importing the package."""
__version__ = "0.1.0"
