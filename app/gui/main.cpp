// gpupart-gui: the desktop app. With no GPU it opens the demo: the built-in recorded H200 with a
// simulated workload of real processes in a private registry, so every view works for real.
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QStyleFactory>

#include "gui_session.hpp"
#include "main_window.hpp"
#include "model/user_error.hpp"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("gpupart-gui");
    QApplication::setOrganizationName("gpupart");
    QApplication::setApplicationVersion(GPUPART_VERSION);
    QApplication::setStyle(QStyleFactory::create("Fusion"));

    QCommandLineParser parser;
    parser.setApplicationDescription("gpupart: see how an NVIDIA GPU is built and shared; move TPCs between processes");
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption snapshot("snapshot", "Show FILE or builtin:NAME instead of this machine's GPU.", "FILE");
    const QCommandLineOption gpu("gpu", "GPU index inside the snapshot.", "N", "0");
    const QCommandLineOption demo("demo", "Run the simulated workload on the built-in H200 (default with no GPU).");
    const QCommandLineOption workers("demo-workers", "Simulated processes in the demo (1-16).", "N", "4");
    parser.addOptions({snapshot, gpu, demo, workers});
    parser.process(app);

    gpupart::gui::SessionOptions options;
    if (parser.isSet(snapshot)) options.snapshot = parser.value(snapshot).toStdString();
    bool ok_gpu = false;
    bool ok_workers = false;
    options.gpu = parser.value(gpu).toInt(&ok_gpu);
    options.demo = parser.isSet(demo);
    options.demo_workers = parser.value(workers).toInt(&ok_workers);
    if (!ok_gpu || options.gpu < 0 || !ok_workers) {
        std::fprintf(stderr, "gpupart-gui: --gpu and --demo-workers take a number\n");
        return 1;
    }
    try {
        gpupart::gui::GuiSession session(options);
        gpupart::gui::MainWindow window(session);
        window.resize(1400, 900);
        window.show();
        return app.exec();
    } catch (const gpupart::UserError& error) {
        std::fprintf(stderr, "gpupart-gui: %s\n", error.what());
        return 1;
    }
}
