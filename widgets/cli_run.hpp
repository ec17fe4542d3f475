#pragma once
// One run of the `gpupart` command line from the window (measure, plan): the window never re-implements
// what the CLI does, it runs it and reads its --json answer, so both say and journal exactly the same.
// Asynchronous (QProcess): the event loop keeps painting while a measurement walks for a dozen seconds.
//
// Stopping is SIGINT, never SIGKILL: `gpupart measure` puts the process's TPCs back on SIGINT (and on
// SIGTERM), while a SIGKILL would leave them walked down until someone runs `gpupart undo`. That is also
// why the destructor interrupts and waits instead of letting QProcess kill the child.
#include <optional>

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

namespace gpupart::widgets {

// The gpupart binary: $GPUPART_CLI when set, else `gpupart` beside the running program (build tree,
// /usr/bin) or in the installed libexec directory, as the app finds its other helpers
// (platform/install_paths.hpp). Throws UserError naming where it looked.
QString gpupart_cli_path();

class CliRun : public QObject {
    Q_OBJECT
public:
    // How long an interrupted child may take to put TPCs back before the window says it did not end.
    static constexpr int kStopWaitMs = 20000;

    explicit CliRun(QObject* parent = nullptr);
    ~CliRun() override;

    // Starts `program args`; `expected_ms` (0: unknown) drives progress(). Refused (false) while running.
    bool start(const QString& program, const QStringList& args, int expected_ms = 0);
    bool running() const { return process_.state() != QProcess::NotRunning; }
    // Sends SIGINT; finished() follows when the child has ended (its own clean-up done).
    void interrupt();
    bool interrupted() const { return interrupted_; }
    std::optional<qint64> childPid() const;

    // Of the last run that ended.
    int exitCode() const { return exit_code_; }
    bool crashed() const { return crashed_; }
    QByteArray standardOutput() const { return stdout_; }
    QString standardError() const { return stderr_; }
    // The CLI's own one-line reason ("gpupart: ..."), else the last line of stderr, else why it did not run.
    QString errorLine() const;

signals:
    void progress(int permille);  // elapsed against expected, held at 990 until the end
    void finished(bool ok);       // ok: exit status 0

private:
    void on_finished(int code, QProcess::ExitStatus status);

    QProcess process_;
    QTimer ticker_;
    QElapsedTimer elapsed_;
    int expected_ms_ = 0;
    bool interrupted_ = false;
    int exit_code_ = 0;
    bool crashed_ = false;
    QByteArray stdout_;
    QString stderr_;
    QString start_error_;
};

}  // namespace gpupart::widgets
