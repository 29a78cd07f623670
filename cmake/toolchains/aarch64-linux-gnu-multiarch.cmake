# Raspberry Pi 4B (aarch64) cross build against Debian multiarch libraries (libgrpc++-dev:arm64,
# libprotobuf-dev:arm64 from scripts/setup.sh) for the board-side farm programs: no find root, the
# arm64 libraries live in /usr/lib/aarch64-linux-gnu. gRPC's code generators are the host's
# (/usr/bin), which is right for generating code. Run the results with plain `qemu-aarch64 PROG`:
# the multiarch libc6:arm64 provides the loader (`-L /usr/aarch64-linux-gnu` would mix two glibcs
# and crash in the loader).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# Keep the host's libraries, CMake packages and pkg-config files out of the search: only arm64 ones.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/cmake)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
