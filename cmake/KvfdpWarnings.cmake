# kvfdp_warnings: the project's warning set, linked PRIVATE by every kvfdp target.
add_library(kvfdp_warnings INTERFACE)
target_compile_options(kvfdp_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wformat=2 -Wundef -Wcast-align
    -Wnull-dereference -Wimplicit-fallthrough>
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
