# ctest accy_install_consumer (cmake -P): installs the accy build ACCY_BUILD_DIR into a fresh
# prefix under ACCY_WORK_DIR, then configures, builds and runs the consumer project
# ACCY_CONSUMER_DIR against it with find_package(accy). Fails on the first step that fails.
foreach(var ACCY_BUILD_DIR ACCY_CONSUMER_DIR ACCY_WORK_DIR ACCY_GENERATOR ACCY_CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${ACCY_WORK_DIR}/prefix)
set(consumer_build ${ACCY_WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${ACCY_WORK_DIR})

function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${name} failed (${result}):\n${out}\n${err}")
  endif()
  message(STATUS "${name}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("install" ${CMAKE_COMMAND} --install ${ACCY_BUILD_DIR} --prefix ${prefix})
# Only the installed tree is visible to the consumer: no path into the build or source folder.
run_step("configure consumer" ${CMAKE_COMMAND} -S ${ACCY_CONSUMER_DIR} -B ${consumer_build}
  -G ${ACCY_GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${ACCY_CXX_COMPILER}
  -DCMAKE_PREFIX_PATH=${prefix})
run_step("build consumer" ${CMAKE_COMMAND} --build ${consumer_build})
# The version file refuses another major.minor: configuring against accy 9.9 must fail.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${ACCY_CONSUMER_DIR} -B ${ACCY_WORK_DIR}/wrong-version
  -G ${ACCY_GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DACCY_REQUIRED_VERSION=9.9
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0 OR NOT err MATCHES "compatible[ \n]+with requested version \"9.9\"")
  message(FATAL_ERROR "find_package(accy 9.9) was not refused by the version file:\n${out}\n${err}")
endif()
message(STATUS "find_package(accy 9.9) refused: ok")
run_step("run consumer" ${consumer_build}/consumer)
message(STATUS "${step_output}")
if(NOT step_output MATCHES "consumer: ok")
  message(FATAL_ERROR "consumer printed no 'consumer: ok':\n${step_output}")
endif()
file(REMOVE_RECURSE ${ACCY_WORK_DIR})
