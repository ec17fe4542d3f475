#!/usr/bin/env bash
# Stages the app's live test for the GPU machine (which has no Qt and no apt): after tests/device/stage.sh,
# builds gpupart-gui-live-test in build/default and puts into .device-carry/gui/ the stripped test, and
# qt.tar.xz: every shared library it and the minimal and offscreen platform plugins load except glibc's and
# the C++ runtime's (the machine's own are newer and compatible), the two plugins, the DejaVu fonts and a
# fonts.conf naming them (the offscreen platform finds fonts through fontconfig). Compressed, it fits the
# device tool's 64 MiB carry beside the CLI.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --build build/default -j2 --target gpupart-gui-live-test > /dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/qt/lib" "$stage/qt/plugins/platforms" "$stage/qt/fonts"
plugins=/usr/lib/x86_64-linux-gnu/qt6/plugins/platforms
cp "$plugins/libqminimal.so" "$plugins/libqoffscreen.so" "$stage/qt/plugins/platforms/"
ldd build/default/tests/widgets/gpupart-gui-live-test "$plugins/libqminimal.so" "$plugins/libqoffscreen.so" |
    awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/qt/lib/"; done
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf "$stage/qt/fonts/"
cat > "$stage/qt/fonts.conf" <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir prefix="relative">fonts</dir><cachedir>/tmp/gpupart-gui-fontcache</cachedir></fontconfig>
EOF
mkdir -p .device-carry/gui
cp build/default/tests/widgets/gpupart-gui-live-test .device-carry/gui/
strip .device-carry/gui/gpupart-gui-live-test
tar -C "$stage" -cJf .device-carry/gui/qt.tar.xz qt
du -sh .device-carry .device-carry/gui/*
