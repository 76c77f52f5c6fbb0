"""The package version: the libchakra version it is built with (CMakeLists.txt project())."""
__version__ = "0.3.0"
