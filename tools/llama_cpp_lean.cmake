# Included by llama.cpp's own project() when maic's install command builds llama-cpp-python
# (CMAKE_ARGS=... -DCMAKE_PROJECT_llama.cpp_INCLUDE=<this file>; see README).
#
# llama-cpp-python forces LLAMA_BUILD_COMMON on, so llama.cpp compiles its "common" library (argument parsing,
# chat templates, JSON schema, the jinja engine: 51 of the 140 compile steps, the slowest C++ of the build), which
# the Python package neither installs nor loads: its bindings use libllama and libggml only.  A normal variable
# set here, in llama.cpp's directory scope, shadows that cache entry (policy CMP0077), so `common` is neither
# built nor installed.  Nothing else changes: the same libllama, the same CPU flags.
set(LLAMA_BUILD_COMMON OFF)
