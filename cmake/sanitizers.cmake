# INFERSCOPE_SANITIZE=address -> ASan + UBSan; thread -> TSan. Applied to every C and C++ compile (not
# to nvcc, which does not take these flags) and to every link.
if(INFERSCOPE_SANITIZE STREQUAL "address")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address$<COMMA>undefined;-fno-omit-frame-pointer;-fno-sanitize-recover=undefined>")
  add_link_options(-fsanitize=address,undefined)
elseif(INFERSCOPE_SANITIZE STREQUAL "thread")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=thread;-fno-omit-frame-pointer>")
  add_link_options(-fsanitize=thread)
elseif(NOT INFERSCOPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "INFERSCOPE_SANITIZE must be '', 'address' or 'thread', not '${INFERSCOPE_SANITIZE}'")
endif()
