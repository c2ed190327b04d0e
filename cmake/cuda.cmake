# INFERSCOPE_CUDA (AUTO, ON or OFF) resolved to ON or OFF. ON enables the CUDA language and builds the
# CUDA kernels (kernels/cuda), the CUDA forward pass (core/cuda, chosen with --device cuda) and their tests.
# AUTO turns it on when nvcc, cudart and cuBLAS are all found and says why when it stays off;
# an explicit ON without them is an error naming what is missing.
string(TOUPPER "${INFERSCOPE_CUDA}" _cuda_request)
# CMake's other spellings of a boolean (TRUE, 1, NO...) mean ON or OFF.
if(_cuda_request MATCHES "^(ON|TRUE|YES|Y|1)$")
  set(_cuda_request ON)
elseif(_cuda_request MATCHES "^(OFF|FALSE|NO|N|0)$")
  set(_cuda_request OFF)
elseif(NOT _cuda_request STREQUAL "AUTO")
  message(FATAL_ERROR "INFERSCOPE_CUDA='${INFERSCOPE_CUDA}': expected AUTO, ON or OFF")
endif()

set(_cuda_missing "")
if(NOT _cuda_request STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    list(APPEND _cuda_missing "nvcc (the CUDA compiler)")
  endif()
  find_package(CUDAToolkit QUIET)
  foreach(_lib IN ITEMS cudart cublas)
    if(NOT TARGET CUDA::${_lib})
      list(APPEND _cuda_missing "the toolkit library ${_lib} (CUDA::${_lib})")
    endif()
  endforeach()
endif()
list(JOIN _cuda_missing ", " _cuda_missing_text)

# From here on INFERSCOPE_CUDA is the decision, a plain ON/OFF that shadows the cached request.
if(_cuda_request STREQUAL "OFF")
  set(INFERSCOPE_CUDA OFF)
  message(STATUS "INFERSCOPE_CUDA: OFF (as requested)")
elseif(_cuda_missing)
  if(_cuda_request STREQUAL "ON")
    message(FATAL_ERROR "INFERSCOPE_CUDA=ON, but these are missing: ${_cuda_missing_text}. Install the CUDA "
                        "toolkit (or point CUDAToolkit_ROOT at it), or configure with -DINFERSCOPE_CUDA=OFF.")
  endif()
  set(INFERSCOPE_CUDA OFF)
  message(STATUS "INFERSCOPE_CUDA: OFF (AUTO, and these are missing: ${_cuda_missing_text})")
else()
  set(INFERSCOPE_CUDA ON)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  # CUDA targets take the C++ standard (20); CMake 3.25 does not know nvcc's flag for it (nvcc 12+ has it).
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  message(STATUS "INFERSCOPE_CUDA: ON (CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}; "
                 "builds the CUDA kernels and the CUDA forward pass)")
endif()
