#include "change_command.hpp"

#include <QUndoStack>

#include "model/user_error.hpp"

namespace gpupart::gui {

ChangeCommand::ChangeCommand(GuiSession& session, widgets::DropTarget target, TpcMask tpcs, Applied applied, Reporter report)
    : QUndoCommand(QString::fromStdString(applied.plan.action)), session_(session), target_(target), tpcs_(tpcs),
      entry_id_(applied.entry.id), report_(std::move(report)) {}

void ChangeCommand::redo() {
    if (first_redo_) {  // applied before it was pushed
        first_redo_ = false;
        return;
    }
    try {
        session_.refresh();
        const Plan plan = session_.planGive(target_, tpcs_);
        const Applied applied = session_.apply(plan);  // refuses (UserError) a plan with an error finding
        entry_id_ = applied.entry.id;
        report_("Redone: " + text(), false);
    } catch (const UserError& error) {
        report_(QString("Cannot redo \"%1\": %2").arg(text(), error.what()), true);
        setObsolete(true);
    }
}

void ChangeCommand::undo() {
    try {
        session_.refresh();
        const Plan plan = session_.controller().plan_undo();
        // The journal's newest undoable entry must be this command's: a change made meanwhile elsewhere
        // (CLI, another window) is not reverted by this window's Ctrl+Z.
        if (plan.undoes != entry_id_)
            throw UserError(QString("the newest change in the history is #%1, not this one (#%2): undo it with "
                                    "`gpupart undo` first")
                                .arg(plan.undoes.value_or(0))
                                .arg(entry_id_)
                                .toStdString());
        session_.apply(plan);
        report_("Undone: " + text(), false);
    } catch (const UserError& error) {
        report_(QString("Cannot undo \"%1\": %2").arg(text(), error.what()), true);
        setObsolete(true);
    }
}

bool give_and_push(GuiSession& session, QUndoStack& stack, const widgets::DropTarget& target, const TpcMask& tpcs,
                   const ChangeCommand::Reporter& report) {
    try {
        session.refresh();  // plan against what is true now, not the last picture
        const Plan plan = session.planGive(target, tpcs);
        if (plan.changes.empty() && !plan.refused()) {
            report("Nothing to change", false);
            return false;
        }
        const Applied applied = session.apply(plan);
        stack.push(new ChangeCommand(session, target, tpcs, applied, report));
        report(QString::fromStdString("Applied: " + applied.plan.action), false);
        return true;
    } catch (const UserError& error) {
        report(QString("Refused: %1").arg(error.what()), true);
        return false;
    }
}

}  // namespace gpupart::gui
