# INFERSCOPE_SANITIZE=address -> ASan + UBSan; thread -> TSan. Applied to every target's C and C++ code
# and C/C++ links; nvcc (CUDA sources) never sees them.
if(INFERSCOPE_SANITIZE STREQUAL "address")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined;-fno-omit-frame-pointer;-fno-sanitize-recover=undefined>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=address,undefined>")
elseif(INFERSCOPE_SANITIZE STREQUAL "thread")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=thread;-fno-omit-frame-pointer>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=thread>")
elseif(NOT INFERSCOPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "INFERSCOPE_SANITIZE must be '', 'address' or 'thread', not '${INFERSCOPE_SANITIZE}'")
endif()
