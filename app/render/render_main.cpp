// gpupart-render: draws a snapshot's floorplan as PNG/SVG with the GUI's painter, headless. `gpupart
// export --png/--svg` runs it (so the gpupart CLI itself never loads Qt, which would cost every
// command, `gpupart run` included, tens of milliseconds at start).
//   gpupart-render GPU_INDEX TITLE PNG_PATH SVG_PATH < snapshot.json      (an empty path: not written)
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include <QGuiApplication>
#include <QString>

#include "floorplan_painter.hpp"
#include "floorplan_scene.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"

namespace {

// Qt's chatter (no XDG_RUNTIME_DIR on a server, and the like) is not the user's business; anything
// else Qt says still reaches stderr, marked as Qt's.
void quiet_qt_messages(QtMsgType type, const QMessageLogContext&, const QString& message) {
    if (type == QtDebugMsg || type == QtInfoMsg || message.startsWith("QStandardPaths:")) return;
    std::fprintf(stderr, "gpupart-render: qt: %s\n", qPrintable(message));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: gpupart-render GPU_INDEX TITLE PNG_PATH SVG_PATH < snapshot.json\n");
        return 2;
    }
    if (std::getenv("QT_QPA_PLATFORM") == nullptr) ::setenv("QT_QPA_PLATFORM", "offscreen", 1);  // no display needed
    qInstallMessageHandler(quiet_qt_messages);
    int qt_argc = 1;
    QGuiApplication app(qt_argc, argv);
    try {
        const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
        const gpupart::Snapshot snapshot = gpupart::parse_snapshot_text(text, "stdin");
        const long index = std::strtol(argv[1], nullptr, 10);
        if (index < 0 || index >= static_cast<long>(snapshot.gpus.size()))
            throw gpupart::UserError("GPU index " + std::string(argv[1]) + " is not in the snapshot");
        const gpupart::Gpu& gpu = snapshot.gpus[static_cast<std::size_t>(index)];
        gpupart::widgets::FloorplanScene scene;
        scene.gpu = &gpu;
        scene.title = QString::fromUtf8(argv[2]);
        scene.owners = gpupart::widgets::owners_from_gpu(gpu);
        if (*argv[3] != '\0') gpupart::widgets::export_floorplan_png(scene, QString::fromUtf8(argv[3]));
        if (*argv[4] != '\0') gpupart::widgets::export_floorplan_svg(scene, QString::fromUtf8(argv[4]));
        return 0;
    } catch (const gpupart::UserError& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
}
