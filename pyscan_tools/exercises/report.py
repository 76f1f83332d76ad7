"""The checker's verdict: one row per stage, a table in a terminal (`str(report)`), HTML with the pictures in Jupyter
(`report._repr_html_()`)."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field

STAGES = ("compiles", "right on integers", "right on floats", "step by step", "races and memory", "speed")

PASS, FAIL, SKIP, NEEDS_GPU, NOT_RUN = "pass", "FAIL", "skip", "needs a GPU", "not run"


@dataclass
class Stage:
    name: str
    status: str = NOT_RUN
    summary: str = ""  # one line
    details: list = field(default_factory=list)  # more lines: the first wrong index, nvcc's message, ...
    hint: object = None  # a hints.Hint where the pattern of the failure says something
    diagnosis: str = ""  # the class of the failure: compile, wrong_integers, bounds, block_sums, race, memory, ...
    picture: bytes | None = None  # a PNG (the step picture with the diverging boxes marked)


@dataclass
class Report:
    exercise: str
    path: str
    stages: list = field(default_factory=list)

    def stage(self, name) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        s = Stage(name)
        self.stages.append(s)
        return s

    @property
    def failed(self) -> Stage | None:
        """The first stage that failed (the checker stops there), or None."""
        return next((s for s in self.stages if s.status == FAIL), None)

    @property
    def passed(self) -> bool:
        return self.failed is None and not any(s.status == NEEDS_GPU for s in self.stages)

    @property
    def diagnosis(self) -> str:
        """The class of the first failure ("" when nothing failed): what the tests of the checker assert."""
        failed = self.failed
        return failed.diagnosis if failed else ""

    @property
    def needs_gpu(self) -> bool:
        return any(s.status == NEEDS_GPU for s in self.stages)

    def verdict(self) -> str:
        failed = self.failed
        if failed:
            return f"WRONG at '{failed.name}': {failed.summary}"
        if self.needs_gpu:
            return "compiles; the rest needs a GPU (see above)"
        return "every check passed"

    def __str__(self):
        width = max(len(s) for s in STAGES)
        lines = [f"exercise {self.exercise}: {self.path}", f"{'stage':{width}s}  {'result':11s}  what"]
        for s in self.stages:
            lines.append(f"{s.name:{width}s}  {s.status:11s}  {s.summary}")
            for d in s.details:
                lines.append(f"{'':{width}s}  {'':11s}    {d}")
            if s.hint is not None:
                lines.append(f"{'':{width}s}  {'':11s}  hint: {s.hint}")
        lines.append(f"verdict: {self.verdict()}")
        return "\n".join(lines)

    def _repr_html_(self):
        colours = {PASS: "#2e7d32", FAIL: "#c62828", NEEDS_GPU: "#8d6e00"}
        rows = []
        for s in self.stages:
            more = "".join(f"<div><code>{html.escape(str(d))}</code></div>" for d in s.details)
            if s.hint is not None:
                more += f"<div><b>hint:</b> {html.escape(str(s.hint))}</div>"
            if s.picture:
                data = base64.b64encode(s.picture).decode()
                more += f'<div><img src="data:image/png;base64,{data}" style="max-width:100%"></div>'
            colour = colours.get(s.status, "#555")
            rows.append(f"<tr><td>{html.escape(s.name)}</td><td style='color:{colour}'><b>{html.escape(s.status)}</b>"
                        f"</td><td>{html.escape(s.summary)}{more}</td></tr>")
        return (f"<div><b>exercise {html.escape(self.exercise)}</b>: <code>{html.escape(self.path)}</code>"
                "<table><tr><th>stage</th><th>result</th><th>what</th></tr>" + "".join(rows) +
                f"</table><p><b>verdict:</b> {html.escape(self.verdict())}</p></div>")
