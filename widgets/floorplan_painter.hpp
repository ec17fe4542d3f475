#pragma once
// Paints the floorplan: GPC boxes, TPC tiles coloured by owner (shared TPCs hatched, free ones grey),
// floorswept holes as empty dashed slots, selection and focus, and the legend. One painter for the
// widget and for the PNG/SVG export, so the exported picture is what the operator saw.
#include <QPainter>
#include <QString>

#include "floorplan_geometry.hpp"
#include "floorplan_scene.hpp"

namespace gpupart::widgets {

// Paints in picture units (FloorplanGeometry::size()); the caller sets any scale on the painter.
void paint_floorplan(QPainter& painter, const FloorplanGeometry& geometry, const FloorplanScene& scene);

// Headless export (needs a QGuiApplication for fonts). Throw UserError with one line when the file
// cannot be written; an existing file is replaced only once the new picture is complete.
void export_floorplan_png(const FloorplanScene& scene, const QString& path, double scale = 2.0);
void export_floorplan_svg(const FloorplanScene& scene, const QString& path);

}  // namespace gpupart::widgets
