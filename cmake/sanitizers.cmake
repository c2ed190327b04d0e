# INFERSCOPE_SANITIZE=address -> ASan + UBSan; thread -> TSan. Applied to every target's C and C++ code
# and C/C++ links; nvcc (CUDA sources) never sees them.
# UBSan runs the checks of values (overflow, shifts, bounds, casts, enums, ...). It leaves out the checks
# that instrument every pointer use: alignment (x86 loads any alignment; our kernels load with
# memcpy/loadu), null (ASan reports a null dereference with its stack) and pointer-overflow. Those three
# doubled the compile time of every file that uses nlohmann::json (engine_metrics.cpp: 13 -> 27 s).
set(_ubsan_checks "signed-integer-overflow,shift,integer-divide-by-zero,float-cast-overflow,bounds,vla-bound,object-size,return,unreachable,bool,enum,builtin,nonnull-attribute,returns-nonnull-attribute")
if(INFERSCOPE_SANITIZE STREQUAL "address")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,${_ubsan_checks};-fno-omit-frame-pointer;-fno-sanitize-recover=undefined>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=address,undefined>")
elseif(INFERSCOPE_SANITIZE STREQUAL "thread")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=thread;-fno-omit-frame-pointer>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=thread>")
elseif(NOT INFERSCOPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "INFERSCOPE_SANITIZE must be '', 'address' or 'thread', not '${INFERSCOPE_SANITIZE}'")
endif()
