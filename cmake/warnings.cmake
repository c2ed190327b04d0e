# Warnings on for our own targets: inferscope_warnings(target). -Wshadow=local is GCC's (clang, the fuzz
# build's compiler, has no such option).
function(inferscope_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local> -Wno-unused-parameter>)
endfunction()
