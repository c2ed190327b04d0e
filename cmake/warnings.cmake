# Warnings on for our own targets: inferscope_warnings(target)
function(inferscope_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow=local -Wno-unused-parameter>)
endfunction()
