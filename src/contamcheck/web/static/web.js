// contamcheck web UI: live progress, the report frame's height, confirmations. No dependencies.
// Text from the server is only ever set with textContent, never parsed as HTML.
"use strict";

(function () {
  const FINISHED = ["done", "failed", "cancelled", "interrupted"];

  function stageRow(stage) {
    const row = document.createElement("li");
    const label = document.createElement("span");
    label.className = "label";
    label.textContent = stage.label;
    const bar = document.createElement("progress");
    bar.setAttribute("aria-label", stage.label);  // read out with its step, not as a bare bar
    const count = document.createElement("span");
    count.className = "count";
    if (stage.total > 0) {
      bar.max = stage.total;
      bar.value = stage.done;
      count.textContent = stage.done + " / " + stage.total;
    } else if (stage.total < 0) {  // the step failed (a model that could not load)
      count.textContent = "failed";
      row.append(label, count);
      return row;
    }
    row.append(label, bar, count);
    return row;
  }

  function show(box, status) {
    const state = document.getElementById("state");
    if (state) {
      if (status.status === "queued") {
        const ahead = status.ahead || 0;
        state.textContent = "Waiting in line: " + ahead + " audit" + (ahead === 1 ? "" : "s") + " before this one, the running one included.";
      } else if (status.cancelling) {
        state.textContent = "Cancelling: stops after the current batch, or in the analysis the current test.";
      } else {
        state.textContent = "Running.";
      }
    }
    const list = document.getElementById("stages");
    if (list) list.replaceChildren(...status.stages.map(stageRow));
  }

  function poll(box) {
    const url = box.dataset.statusUrl;
    const shown = box.dataset.status;
    let missed = 0;
    async function tick() {
      try {
        const response = await fetch(url, { cache: "no-store", headers: { Accept: "application/json" } });
        if (response.ok) {
          missed = 0;
          const status = await response.json();
          if (status.status !== shown || FINISHED.includes(status.status)) {
            window.location.reload();
            return;
          }
          show(box, status);
        }
      } catch (error) {
        // the server may be restarting: keep trying, and say so once it has not answered for a while
        missed += 1;
        const state = document.getElementById("state");
        if (state && missed >= 4) {
          state.textContent = "The server does not answer (stopped?): this page goes on when it is back; " +
            "an audit cut off by a stop shows as interrupted, to run again.";
        }
      }
      window.setTimeout(tick, 700);
    }
    window.setTimeout(tick, 300);
  }

  function fitFrame(frame) {
    try {
      const root = frame.contentDocument && frame.contentDocument.documentElement;
      if (root) frame.style.height = root.scrollHeight + 8 + "px";
    } catch (error) {
      // not readable: keep the stylesheet's height, the frame scrolls
    }
  }

  // The report's own links (#test-min-k …) move the page, since the frame is as tall as the report.
  function followAnchors(frame) {
    const doc = frame.contentDocument;
    if (!doc) return;
    doc.addEventListener("click", function (event) {
      const link = event.target.closest && event.target.closest("a[href^='#']");
      if (!link) return;
      const target = doc.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
      if (!target) return;
      event.preventDefault();
      const top = frame.getBoundingClientRect().top + target.getBoundingClientRect().top + window.scrollY;
      window.scrollTo({ top: top - 12, behavior: "smooth" });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    const box = document.getElementById("progress");
    if (box) poll(box);
    const frame = document.getElementById("report-frame");
    if (frame) {
      frame.addEventListener("load", () => {
        fitFrame(frame);
        followAnchors(frame);
      });
      window.addEventListener("resize", () => fitFrame(frame));
      if (frame.contentDocument && frame.contentDocument.readyState === "complete") fitFrame(frame);
    }
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.dataset.confirm)) event.preventDefault();
      });
    });
  });
})();
