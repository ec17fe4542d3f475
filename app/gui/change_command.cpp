#include "change_command.hpp"

#include <algorithm>

#include <QUndoStack>

#include "model/user_error.hpp"

namespace gpupart::gui {

ChangeCommand::ChangeCommand(GuiSession& session, const Applied& applied, Reporter report)
    : QUndoCommand(QString::fromStdString(applied.plan.action)), session_(session), action_(applied.plan.action),
      entry_id_(applied.entry.id), report_(std::move(report)) {
    for (const PlannedChange& change : applied.plan.changes) masks_.push_back({change.pid, change.after, change.start_time});
}

void ChangeCommand::redo() {
    if (first_redo_) {  // applied before it was pushed
        first_redo_ = false;
        return;
    }
    try {
        session_.refresh();
        const Applied applied = session_.apply(session_.controller().plan_masks(masks_, action_));
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
                                .arg(static_cast<qlonglong>(plan.undoes.value_or(0)))
                                .arg(static_cast<qlonglong>(entry_id_))
                                .toStdString());
        session_.apply(plan);
        report_("Undone: " + text(), false);
    } catch (const UserError& error) {
        report_(QString("Cannot undo \"%1\": %2").arg(text(), error.what()), true);
        setObsolete(true);
    }
}

bool apply_and_push(GuiSession& session, QUndoStack& stack, const Plan& plan, const ChangeCommand::Reporter& report) {
    try {
        if (plan.changes_nothing() && !plan.refused()) {
            report("Nothing to change", false);
            return false;
        }
        // A drop or menu choice that would change nothing (TPCs onto their holder, releasing free ones) is
        // refused by the controller; it is said plainly, not as an error.
        const bool only_no_change = plan.refused() && std::all_of(plan.findings.begin(), plan.findings.end(), [](const Finding& f) {
                                        return f.severity != Severity::error || f.id == "no-change";
                                    });
        if (only_no_change) {
            const auto first = std::find_if(plan.findings.begin(), plan.findings.end(), [](const Finding& f) { return f.id == "no-change"; });
            QString message = QString::fromStdString(first->message);  // "... already has TPCs 9-16: nothing to change"
            message[0] = message[0].toUpper();
            report(message, false);
            return false;
        }
        const Applied applied = session.apply(plan);  // refuses (UserError) a plan with an error finding
        stack.push(new ChangeCommand(session, applied, report));
        report(QString::fromStdString("Applied: " + applied.plan.action), false);
        return true;
    } catch (const UserError& error) {
        report(QString("Refused: %1").arg(error.what()), true);
        return false;
    }
}

bool give_and_push(GuiSession& session, QUndoStack& stack, const widgets::DropTarget& target, const TpcMask& tpcs,
                   const ChangeCommand::Reporter& report) {
    session.refresh();  // plan against what is true now, not the last picture
    return apply_and_push(session, stack, session.planGive(target, tpcs), report);
}

}  // namespace gpupart::gui
