#include "export_file.hpp"

#include <QFile>

#include "platform/safe_file.hpp"

namespace gpupart::widgets {

void write_export_file(const QString& path, const QByteArray& bytes, std::string_view what) {
    // encodeName: the bytes the file system uses for the name, as QFile would open it.
    replace_file(QFile::encodeName(path).toStdString(), std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())),
                 0644, what);
}

}  // namespace gpupart::widgets
