# Read by llama.cpp's own project() call (CMAKE_PROJECT_llama.cpp_INCLUDE, set in build.py).
# llama-cpp-python forces llama.cpp's `common` library on (its CMakeLists.txt caches
# LLAMA_BUILD_COMMON=ON with FORCE), but its Python bindings load only libllama and ggml;
# `common` (with the HTTP client it links) is only linked into the multimodal library,
# which is not built either. A plain variable here shadows that cached ON for llama.cpp's
# directory, so neither is compiled: about half of the build (docs/runner.md).
set(LLAMA_BUILD_COMMON OFF)
