#include "cli_run.hpp"

#include <algorithm>

#include <signal.h>

#include "platform/install_paths.hpp"

namespace gpupart::widgets {

QString gpupart_cli_path() {
    return QString::fromStdString(find_helper(running_executable(), "gpupart", "GPUPART_CLI").string());
}

CliRun::CliRun(QObject* parent) : QObject(parent) {
    ticker_.setInterval(200);  // a smooth enough bar; the panel does nothing else while it ticks
    connect(&ticker_, &QTimer::timeout, this, [this] {
        if (expected_ms_ > 0)
            emit progress(static_cast<int>(std::min<qint64>(990, elapsed_.elapsed() * 1000 / expected_ms_)));
    });
    connect(&process_, &QProcess::finished, this, &CliRun::on_finished);
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;  // the others end in finished()
        start_error_ = QString("cannot run %1: %2").arg(process_.program(), process_.errorString());
        ticker_.stop();
        exit_code_ = -1;
        crashed_ = true;
        emit finished(false);
    });
}

CliRun::~CliRun() {
    if (!running()) return;
    // Not QProcess's SIGKILL: the child must get to put the TPCs back (see the header).
    disconnect(&process_, nullptr, this, nullptr);
    ::kill(static_cast<pid_t>(process_.processId()), SIGINT);
    if (!process_.waitForFinished(kStopWaitMs)) process_.kill();
}

bool CliRun::start(const QString& program, const QStringList& args, int expected_ms) {
    if (running()) return false;
    interrupted_ = false;
    exit_code_ = 0;
    crashed_ = false;
    stdout_.clear();
    stderr_.clear();
    start_error_.clear();
    expected_ms_ = expected_ms;
    elapsed_.start();
    process_.start(program, args);
    ticker_.start();
    emit progress(0);
    return true;
}

void CliRun::interrupt() {
    if (!running() || process_.processId() <= 0) return;
    interrupted_ = true;
    ::kill(static_cast<pid_t>(process_.processId()), SIGINT);
}

std::optional<qint64> CliRun::childPid() const {
    if (!running()) return std::nullopt;
    return process_.processId();
}

void CliRun::on_finished(int code, QProcess::ExitStatus status) {
    ticker_.stop();
    stdout_ = process_.readAllStandardOutput();
    stderr_ = QString::fromUtf8(process_.readAllStandardError());
    exit_code_ = code;
    crashed_ = status == QProcess::CrashExit;
    emit progress(1000);
    emit finished(!crashed_ && code == 0);
}

QString CliRun::errorLine() const {
    if (!start_error_.isEmpty()) return start_error_;
    const QStringList lines = stderr_.split('\n', Qt::SkipEmptyParts);
    // The CLI says why it refused in one line starting "gpupart:"; notes before it are context.
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (it->startsWith("gpupart:") && !it->startsWith("gpupart: note:")) return it->trimmed();
    if (!lines.isEmpty()) return lines.back().trimmed();
    if (crashed_) return "gpupart ended on a signal";
    return exit_code_ == 0 ? QString() : QString("gpupart exited with status %1").arg(exit_code_);
}

}  // namespace gpupart::widgets
