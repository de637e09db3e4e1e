# kvfdp_warnings: the project's warning set, linked PRIVATE by every kvfdp target.
# (No -Wnull-dereference: GCC 12 reports false positives inside libstdc++ and nlohmann-json.)
add_library(kvfdp_warnings INTERFACE)
target_compile_options(kvfdp_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wformat=2 -Wundef -Wcast-align
    -Wimplicit-fallthrough>
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
