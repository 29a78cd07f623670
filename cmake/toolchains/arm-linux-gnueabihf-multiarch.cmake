# Raspberry Pi 3B (armv7 hard-float) cross build against Debian multiarch libraries (libgrpc++-dev:armhf,
# libprotobuf-dev:armhf from scripts/setup.sh) for the board-side farm programs: no find root, the
# armhf libraries live in /usr/lib/arm-linux-gnueabihf. gRPC's code generators are the host's
# (/usr/bin), which is right for generating code. Run the results with plain `qemu-arm PROG`:
# the multiarch libc6:armhf provides the loader (`-L /usr/arm-linux-gnueabihf` would mix two glibcs
# and crash in the loader).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm)
# Keep the host's libraries, CMake packages and pkg-config files out of the search: only armhf ones.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/cmake)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/arm-linux-gnueabihf/pkgconfig:/usr/share/pkgconfig)
