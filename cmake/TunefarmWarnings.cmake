# tunefarm_set_warnings(target): the project's warning set; errors when TUNEFARM_WERROR is ON (CI).
function(tunefarm_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(TUNEFARM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
