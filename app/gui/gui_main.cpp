// gpupart-gui: the desktop app. With no GPU it opens the demo: the built-in recorded H200 with a
// simulated workload of real processes in a private registry, so every view works for real.
#include <csignal>
#include <cstdio>

#include <sys/socket.h>
#include <unistd.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QSocketNotifier>
#include <QStyleFactory>

#include "app_icon.hpp"
#include "gui_session.hpp"
#include "main_window.hpp"
#include "model/user_error.hpp"

namespace {

// SIGTERM/SIGINT/SIGHUP end the event loop normally (the handler only writes a byte), so the demo's
// workers are stopped and its private registry removed even when the window is killed from a shell.
int g_signal_pipe[2] = {-1, -1};

void on_quit_signal(int) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t written = ::write(g_signal_pipe[1], &byte, 1);
}

void quit_on_signals(QApplication& app) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g_signal_pipe) != 0) return;
    auto* notifier = new QSocketNotifier(g_signal_pipe[0], QSocketNotifier::Read, &app);
    QObject::connect(notifier, &QSocketNotifier::activated, &app, &QApplication::quit);
    struct sigaction action {};
    action.sa_handler = on_quit_signal;
    sigemptyset(&action.sa_mask);
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(signal, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("gpupart-gui");
    QApplication::setOrganizationName("gpupart");
    QApplication::setApplicationVersion(GPUPART_VERSION);
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setWindowIcon(gpupart::gui::app_icon());
    quit_on_signals(app);

    QCommandLineParser parser;
    parser.setApplicationDescription("gpupart: see how an NVIDIA GPU is built and shared; move TPCs between processes");
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption snapshot("snapshot", "Show FILE or builtin:NAME instead of this machine's GPU.", "FILE");
    const QCommandLineOption gpu("gpu", "GPU: index inside the snapshot, UUID (or a unique prefix) or PCI bus id, as "
                                        "nvidia-smi -i takes them.", "GPU", "0");
    const QCommandLineOption demo("demo", "Run the simulated workload on the built-in H200 (default with no GPU).");
    const QCommandLineOption workers("demo-workers", "Simulated processes in the demo (1-40).", "N", "4");
    const QCommandLineOption app_masks("demo-app-masks", "In the demo, one worker also plays a program that chooses its own "
                                                         "masks through libgpupart.so (a global and two stream masks).");
    parser.addOptions({snapshot, gpu, demo, workers, app_masks});
    parser.process(app);

    gpupart::gui::SessionOptions options;
    if (parser.isSet(snapshot)) options.snapshot = parser.value(snapshot).toStdString();
    bool ok_workers = false;
    options.gpu = parser.value(gpu).toStdString();  // resolved against the snapshot by the session
    options.demo = parser.isSet(demo);
    options.demo_workers = parser.value(workers).toInt(&ok_workers);
    options.demo_app_masks = parser.isSet(app_masks);
    if (!ok_workers) {
        std::fprintf(stderr, "gpupart-gui: --demo-workers takes a number\n");
        return 1;
    }
    try {
        gpupart::gui::GuiSession session(options);
        gpupart::gui::MainWindow window(session);
        window.show();  // at the saved geometry, else sized to this screen (MainWindow::placeOnScreen)
        return app.exec();
    } catch (const gpupart::UserError& error) {
        std::fprintf(stderr, "gpupart-gui: %s\n", error.what());
        return 1;
    }
}
