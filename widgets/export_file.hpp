#pragma once
// Writing an exported picture (PNG, SVG) to the path the user chose, through the same safe replace as
// every other file gpupart writes (platform/safe_file.hpp): drawn in memory first, then a new randomly
// named file renamed over the target. A device node, FIFO, directory or symlink at the target is
// refused and left as it is; the old picture stays whole if anything fails. Throws UserError (one line).
#include <string_view>

#include <QByteArray>
#include <QString>

namespace gpupart::widgets {

void write_export_file(const QString& path, const QByteArray& bytes, std::string_view what);

}  // namespace gpupart::widgets
