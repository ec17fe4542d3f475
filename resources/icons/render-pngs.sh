#!/usr/bin/env bash
# Renders the committed PNG icons from gpupart-gui.svg; run after changing the SVG and commit the PNGs
# (the build does not render them, so it needs no SVG rasteriser). Needs rsvg-convert (librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")"
for size in 48 128; do
    rsvg-convert --width "$size" --height "$size" --output "gpupart-gui-$size.png" gpupart-gui.svg
done
