# qcustomplot.h includes the whole of QtCore, QtGui, QtWidgets and QtPrintSupport: 350k lines that take
# 15-25 s to parse in every file that includes it. inferscope_gui_plot precompiles it once per build (with
# nlohmann/json.hpp), and every file of a GUI library or test that includes <qcustomplot.h> itself
# reuses that header. Only those: loading the 350 MB header costs a file that never sees the plot
# headers 3-4 s, and GCC uses a precompiled header only where the macros it was made with (QT_*_LIB,
# QCUSTOMPLOT_USE_LIBRARY, which every target linking inferscope_gui_plot has) are defined the same way.

# TARGET's sources that include <qcustomplot.h> themselves, in OUT; the others skip the header.
function(inferscope_plot_header_users target out)
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(users "")
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${dir}" OUTPUT_VARIABLE path)
    file(STRINGS "${path}" includes REGEX "^#include <qcustomplot.h>")
    if(includes)
      list(APPEND users ${source})
    else()
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
  set(${out} "${users}" PARENT_SCOPE)
endfunction()

# Makes TARGET the one that precompiles the plot header.
function(inferscope_precompile_plot_header target)
  inferscope_plot_header_users(${target} users)  # for its side: the target's other files skip the header
  target_precompile_headers(${target} PRIVATE <qcustomplot.h> <nlohmann/json.hpp>)
endfunction()

# TARGET, which links inferscope_gui_plot, reuses the plot header in the files that include it.
function(inferscope_reuse_plot_header target)
  inferscope_plot_header_users(${target} users)
  if(users)
    target_precompile_headers(${target} REUSE_FROM inferscope_gui_plot)
  endif()
endfunction()
