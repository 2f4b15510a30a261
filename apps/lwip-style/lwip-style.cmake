# The lwip-style application (apps/lwip-style/*.c): the same application
# files built twice, against wisp's lwIP compatibility layer and against
# Debian's lwIP 2.1.3 (liblwip-dev), each with its own glue file
# (test/lwip-style/glue_*.c). test/interop/test_lwip_compat.sh runs both.
set(LWIP_STYLE_APP ${CMAKE_CURRENT_LIST_DIR}/main.c ${CMAKE_CURRENT_LIST_DIR}/echo_netconn.c
                   ${CMAKE_CURRENT_LIST_DIR}/http_socket.c ${CMAKE_CURRENT_LIST_DIR}/raw_apps.c
                   ${CMAKE_CURRENT_LIST_DIR}/discard_netconn.c ${CMAKE_CURRENT_LIST_DIR}/netconn_server.c)
set(LWIP_STYLE_GLUE ${CMAKE_CURRENT_LIST_DIR}/../../test/lwip-style)

add_executable(lwip-style-wisp ${LWIP_STYLE_APP} ${LWIP_STYLE_GLUE}/glue_wisp.c)
target_include_directories(lwip-style-wisp PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(lwip-style-wisp PRIVATE wisp_lwip)
target_compile_options(lwip-style-wisp PRIVATE ${WISP_WARN})
set_target_properties(lwip-style-wisp PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

find_path(LWIP_INCLUDE_DIR lwip/init.h PATHS /usr/include/lwip NO_DEFAULT_PATH)
find_library(LWIP_LIBRARY lwip)
if(LWIP_INCLUDE_DIR AND LWIP_LIBRARY)
  add_executable(lwip-style-lwip ${LWIP_STYLE_APP} ${LWIP_STYLE_GLUE}/glue_lwip.c)
  # Debian's lwIP headers only: the target links nothing of wisp's.
  target_include_directories(lwip-style-lwip PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${LWIP_INCLUDE_DIR})
  target_compile_definitions(lwip-style-lwip PRIVATE _GNU_SOURCE)
  target_link_libraries(lwip-style-lwip PRIVATE ${LWIP_LIBRARY} Threads::Threads)
  target_compile_options(lwip-style-lwip PRIVATE -Wall -Wextra)
  set_target_properties(lwip-style-lwip PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
