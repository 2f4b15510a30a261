# Toolchain file for the big-endian unit test build (tools/test.sh): Debian's
# s390x cross compiler (gcc-s390x-linux-gnu), cmocka of the s390x
# architecture (multiarch: dpkg --add-architecture s390x; libcmocka-dev:s390x)
# and QEMU user mode (qemu-user) running the test programs under ctest:
#   cmake -S . -B build-be -DCMAKE_TOOLCHAIN_FILE=cmake/s390x-linux-gnu.cmake
# The programs run with the multiarch s390x libraries (/lib/ld64.so.1,
# /usr/lib/s390x-linux-gnu), so qemu needs no -L.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)
find_program(WISP_QEMU_S390X qemu-s390x REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${WISP_QEMU_S390X})
