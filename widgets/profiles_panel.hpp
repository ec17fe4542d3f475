#pragma once
// The profiles panel: the user's and the system's partition profiles, with Apply, Save current as...,
// Diff against now and Delete. It changes no partition itself: Apply plans the profile with the
// controller (plan_profile) and hands the plan to `applyPlan`, which the main window sets (so the change
// goes through its undo stack and findings view like every other). Files are read and written through
// ProfileStore, exactly as `gpupart profile` does. Problems show inline, one line, never in a dialog.
#include <functional>
#include <optional>

#include <QString>
#include <QStringList>
#include <QWidget>

#include "controller/controller.hpp"
#include "controller/profile_store.hpp"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTreeWidget;

namespace gpupart::widgets {

class ProfilesPanel : public QWidget {
    Q_OBJECT
public:
    explicit ProfilesPanel(QWidget* parent = nullptr);

    // Where profiles live; ProfileStore::standard() until set.
    void setStore(const ProfileStore& store);
    // The state plans and diffs are made against (the GUI's controller, refreshed by the main window).
    // Without one, Apply, Save and Diff are disabled.
    void setController(const Controller* controller);

    // Set by the main window. `applyPlan` applies a plan that has no error finding (it may throw
    // UserError: shown inline); the plan arms the profile's rules for processes that start later too.
    std::function<void(const Plan&)> applyPlan;
    // Questions to the user; by default a QMessageBox and a QInputDialog. Tests answer them directly.
    std::function<bool(const QString& question)> confirm;
    std::function<std::optional<QString>()> askName;  // nullopt: cancelled

    QStringList profileNames() const;  // as listed, user profiles shadowing system ones of the same name
    bool selectProfile(const QString& name);
    QString selectedProfile() const;  // empty when none
    QString diffText() const;
    QString messageText() const;      // the inline line: the last action's result or error
    bool messageIsError() const;

public slots:
    void reload();           // re-reads the profile directories
    void applySelected();
    void saveCurrentAs();    // asks for a name, then saves
    bool saveCurrentAs(const QString& name);
    void diffSelected();
    void deleteSelected();

protected:
    void showEvent(QShowEvent* event) override;

private:
    const StoredProfile* selected() const;
    void update_buttons();
    void show_message(const QString& text, bool error);
    // Runs an action; a UserError (or any std::exception) becomes the inline error line.
    void guarded(const std::function<void()>& action);

    ProfileStore store_;
    const Controller* controller_ = nullptr;
    std::vector<StoredProfile> profiles_;
    QTreeWidget* list_;
    QPushButton* apply_;
    QPushButton* save_;
    QPushButton* diff_;
    QPushButton* delete_;
    QLabel* message_icon_;
    QLabel* message_;
    QPlainTextEdit* diff_text_;
    bool message_is_error_ = false;
    bool showing_load_problem_ = false;  // the message line is reload()'s "could not be read"
};

}  // namespace gpupart::widgets
