# cmake/freertos.cmake -- the FreeRTOS sys port (ports/freertos) built and
# tested on the host with the kernel's POSIX port (included from the top
# level CMakeLists.txt; see docs/porting.md "FreeRTOS").
#
# The kernel is never part of this repository: FREERTOS_KERNEL_PATH (CMake
# variable or environment) names a FreeRTOS-Kernel tree; default
# <project>/../shared/third_party/FreeRTOS-Kernel when it exists. Without a
# kernel the FreeRTOS targets and tests are skipped, with one status line.
#
# Targets:
#  wisp_freertos_kernel  the kernel: tasks, queues, lists, the POSIX port,
#                        heap_4 (test/freertos/FreeRTOSConfig.h)
#  wisp_freertos_host    core + OS layer + apps/lib + the unix TAP driver
#                        + ports/freertos/sys_freertos.c, built with
#                        test/freertos/wisp_opts_freertos_host.h
#  wisp-node-freertos    apps/wisp-node/*.c unchanged, run as a FreeRTOS
#                        task (test/freertos/rtos_host.c): stack task,
#                        application tasks, the TAP driver in a task
#  test_freertos_<t>     the threaded unit tests test/unit/<t>.c built
#                        against the FreeRTOS port (ctest unit.freertos.<t>)

if(NOT DEFINED FREERTOS_KERNEL_PATH)
  if(DEFINED ENV{FREERTOS_KERNEL_PATH})
    set(FREERTOS_KERNEL_PATH "$ENV{FREERTOS_KERNEL_PATH}")
  elseif(EXISTS "${CMAKE_SOURCE_DIR}/../shared/third_party/FreeRTOS-Kernel/tasks.c")
    get_filename_component(FREERTOS_KERNEL_PATH "${CMAKE_SOURCE_DIR}/../shared/third_party/FreeRTOS-Kernel" ABSOLUTE)
  endif()
endif()
set(FREERTOS_KERNEL_PATH "${FREERTOS_KERNEL_PATH}" CACHE PATH "FreeRTOS-Kernel source tree (empty: FreeRTOS parts skipped)")
set(WISP_RTOS_POSIX "${FREERTOS_KERNEL_PATH}/portable/ThirdParty/GCC/Posix")
if(NOT FREERTOS_KERNEL_PATH OR NOT EXISTS "${FREERTOS_KERNEL_PATH}/tasks.c" OR NOT EXISTS "${WISP_RTOS_POSIX}/port.c")
  message(STATUS "wisp: no FreeRTOS kernel (set FREERTOS_KERNEL_PATH to a FreeRTOS-Kernel tree): FreeRTOS port tests skipped")
  return()
endif()
if(WISP_OPTS_HEADER AND NOT WISP_OPTS_HEADER STREQUAL "wisp_opts_host.h")
  # (the host build's default wisp_opts_host.h is not a choice; tools/test.sh's WISP_IPV6 pass, a user's options header: the FreeRTOS
  # host tests are tied to their own, test/freertos/wisp_opts_freertos_host.h)
  message(STATUS "wisp: FreeRTOS port tests skipped: they use their own options header, not WISP_OPTS_HEADER=${WISP_OPTS_HEADER}")
  return()
endif()
message(STATUS "wisp: FreeRTOS kernel ${FREERTOS_KERNEL_PATH}: FreeRTOS port tests on its POSIX port")

set(WISP_RTOS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/test/freertos)

# The kernel (its own code: no wisp warning flags).
add_library(wisp_freertos_kernel STATIC
  ${FREERTOS_KERNEL_PATH}/tasks.c ${FREERTOS_KERNEL_PATH}/queue.c ${FREERTOS_KERNEL_PATH}/list.c
  ${FREERTOS_KERNEL_PATH}/portable/MemMang/heap_4.c
  ${WISP_RTOS_POSIX}/port.c ${WISP_RTOS_POSIX}/utils/wait_for_event.c)
target_include_directories(wisp_freertos_kernel PUBLIC ${WISP_RTOS_DIR} ${FREERTOS_KERNEL_PATH}/include
                                                       ${WISP_RTOS_POSIX} ${WISP_RTOS_POSIX}/utils)
target_link_libraries(wisp_freertos_kernel PUBLIC Threads::Threads)
# POSIX 2008 (robust mutexes, clock_gettime) under the project's -std=c99.
target_compile_definitions(wisp_freertos_kernel PRIVATE _POSIX_C_SOURCE=200809L)

# wisp with the FreeRTOS sys port (own copies of the sources: the handle
# structs differ from the pthreads build's).
file(GLOB WISP_RTOS_APPS_SRC CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/apps/lib/*.c)
add_library(wisp_freertos_host STATIC ${WISP_CORE_SRC} ${WISP_API_SRC} ${WISP_RTOS_APPS_SRC}
  ${CMAKE_CURRENT_SOURCE_DIR}/ports/unix/unix_port.c ${CMAKE_CURRENT_SOURCE_DIR}/ports/unix/tapdev.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ports/freertos/sys_freertos.c)
target_include_directories(wisp_freertos_host PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
  ${CMAKE_CURRENT_SOURCE_DIR}/ports/freertos ${CMAKE_CURRENT_SOURCE_DIR}/ports/unix ${CMAKE_CURRENT_SOURCE_DIR}/apps/lib)
target_compile_definitions(wisp_freertos_host PUBLIC "WISP_OPTS_HEADER=\"wisp_opts_freertos_host.h\"" PRIVATE _GNU_SOURCE)
target_include_directories(wisp_freertos_host PUBLIC ${WISP_RTOS_DIR})
target_compile_options(wisp_freertos_host PRIVATE ${WISP_WARN})
target_link_libraries(wisp_freertos_host PUBLIC wisp_freertos_kernel)

# The host main (test/freertos/rtos_host.c) runs the program's main() as the
# first task: the program is compiled with -Dmain=wisp_rtos_app_main. Two
# flavours: main(argc, argv) and cmocka's main(void).
foreach(v 0 1)
  add_library(wisp_freertos_main${v} STATIC ${WISP_RTOS_DIR}/rtos_host.c)
  target_compile_definitions(wisp_freertos_main${v} PRIVATE WISP_RTOS_MAIN_ARGS=${v})
  target_link_libraries(wisp_freertos_main${v} PUBLIC wisp_freertos_kernel)
  target_compile_options(wisp_freertos_main${v} PRIVATE ${WISP_WARN})
endforeach()

# The node: apps/wisp-node/*.c unchanged; its main() becomes the first
# task's, its ppoll() a FreeRTOS-friendly one (rtos_host.c).
add_executable(wisp-node-freertos ${WISP_NODE_SRC})
target_link_libraries(wisp-node-freertos PRIVATE wisp_freertos_main1 wisp_freertos_host PkgConfig::NETTLE)
# (main renamed: no prototype for it in main.c)
target_compile_options(wisp-node-freertos PRIVATE ${WISP_WARN} -Wno-missing-prototypes)
target_compile_definitions(wisp-node-freertos PRIVATE _GNU_SOURCE main=wisp_rtos_app_main ppoll=wisp_rtos_ppoll)
set_target_properties(wisp-node-freertos PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# The threaded unit tests against the FreeRTOS port: the same sources and
# assertions as unit.<test>, main() run as a task. Labels unit and
# freertos, not threads: the ThreadSanitizer pass (ctest -L threads) would
# stop at the kernel's POSIX port itself, whose tick thread reads the
# current task pointer while tasks switch (a data race by design there).
if(CMOCKA_LIB)
  add_library(wisp_freertos_testutil STATIC test/testutil.c)
  target_include_directories(wisp_freertos_testutil PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/test)
  target_compile_definitions(wisp_freertos_testutil PUBLIC WISP_PRIVATE_ACCESS PRIVATE sched_yield=wisp_rtos_yield)
  target_link_libraries(wisp_freertos_testutil PUBLIC wisp_freertos_host ${CMOCKA_LIB})
  foreach(t test_sys test_tcpip test_netconn test_sockets test_sockets_opts test_sockets_posix test_dns
            test_netconn_zero_window test_owner test_icmp_sockets)
    add_executable(${t}_freertos test/unit/${t}.c)
    target_link_libraries(${t}_freertos PRIVATE wisp_freertos_main0 wisp_freertos_testutil)
    target_compile_definitions(${t}_freertos PRIVATE main=wisp_rtos_app_main)
    target_compile_options(${t}_freertos PRIVATE -Wall -Wextra -Werror)
    add_test(NAME unit.freertos.${t} COMMAND ${t}_freertos)
    set_tests_properties(unit.freertos.${t} PROPERTIES LABELS "unit;freertos" TIMEOUT 300)
  endforeach()
  # ... and netconn / sockets again with message passing
  # (WISP_TCPIP_CORE_LOCKING 0: the OS layer's sources compiled into the
  # program, ahead of the library's), like unit.test_netconn_msg.
  foreach(t test_netconn test_sockets)
    add_executable(${t}_msg_freertos test/unit/${t}.c ${WISP_API_SRC})
    target_link_libraries(${t}_msg_freertos PRIVATE wisp_freertos_main0 wisp_freertos_testutil)
    target_compile_definitions(${t}_msg_freertos PRIVATE main=wisp_rtos_app_main WISP_TCPIP_CORE_LOCKING=0)
    target_compile_options(${t}_msg_freertos PRIVATE -Wall -Wextra -Werror)
    add_test(NAME unit.freertos.${t}_msg COMMAND ${t}_msg_freertos)
    set_tests_properties(unit.freertos.${t}_msg PROPERTIES LABELS "unit;freertos" TIMEOUT 300)
  endforeach()
  foreach(t test_netconn test_netconn_msg)
    target_sources(${t}_freertos PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/apps/examples/netconn_echo.c)
    target_include_directories(${t}_freertos PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/apps/examples)
  endforeach()
endif()

# Interop over TAP: the checks of test_api_netconn.sh / test_api_socket.sh
# (TCP echo with SHA-256, parallel connections, chargen, discard, UDP, client
# mode, pools at baseline) run against the FreeRTOS node.
foreach(api netconn socket)
  add_test(NAME interop.freertos_api_${api}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/interop/test_api_${api}.sh $<TARGET_FILE:wisp-node-freertos>)
  set_tests_properties(interop.freertos_api_${api} PROPERTIES LABELS "interop;freertos" TIMEOUT 900
                       SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

# Cortex-M3 cross build of the port with the kernel's GCC/ARM_CM3 port: it
# compiles warning-free and its sizes are printed (tools/freertos-cm3.sh).
find_program(WISP_RTOS_ARM_GCC arm-none-eabi-gcc)
if(WISP_RTOS_ARM_GCC)
  add_test(NAME cross.freertos_cm3 COMMAND ${CMAKE_COMMAND} -E env FREERTOS_KERNEL_PATH=${FREERTOS_KERNEL_PATH}
           bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/freertos-cm3.sh ${CMAKE_BINARY_DIR}/freertos-cm3)
  set_tests_properties(cross.freertos_cm3 PROPERTIES LABELS "cross;freertos" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
