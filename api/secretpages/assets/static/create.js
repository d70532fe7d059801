// create.js: the create page. Encrypts in the page (ots.js) and shows the link.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  let mode = "text";
  const status = (msg, cls) => { $("status").textContent = msg; $("status").className = cls || ""; };

  function setMode(m) {
    mode = m;
    $("tab-text").setAttribute("aria-selected", String(m === "text"));
    $("tab-file").setAttribute("aria-selected", String(m === "file"));
    $("pane-text").hidden = m !== "text";
    $("pane-file").hidden = m !== "file";
    status("");
  }
  $("tab-text").addEventListener("click", () => setMode("text"));
  $("tab-file").addEventListener("click", () => setMode("file"));

  $("create-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const opts = { views: Number($("views").value), duration: Number($("expires").value), passphrase: $("passphrase").value };
    const btn = $("create");
    btn.disabled = true;
    status(mode === "file" ? "Encrypting and uploading…" : "Encrypting…");
    try {
      let link;
      if (mode === "file") {
        const f = $("file").files[0];
        if (!f) throw new OTS.OTSError("invalid", "Choose a file first.");
        const bar = $("progress");
        bar.hidden = false;
        link = await OTS.createFile(location.origin, f, opts, (done, total) => { bar.max = total || 1; bar.value = done; });
        bar.hidden = true;
      } else {
        link = await OTS.createText(location.origin, $("text").value, opts);
      }
      $("link").value = link;
      $("result-hint").textContent = opts.passphrase
        ? "Send the passphrase another way: it is not part of the link. The link works " + opts.views + " time(s)."
        : "Anyone with this link can open it " + opts.views + " time(s). Then it is gone.";
      $("create-form").hidden = true;
      $("result").hidden = false;
      $("text").value = "";
      $("passphrase").value = "";
      status("Link created.", "ok");
      $("link").select();
    } catch (e) {
      $("progress").hidden = true;
      status(e instanceof OTS.OTSError ? e.message : "Something went wrong: " + e.message, "error");
    } finally {
      btn.disabled = false;
    }
  });

  $("copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("link").value);
      status("Link copied.", "ok");
    } catch (e) {
      $("link").select();
      status("Press Ctrl+C (or long-press) to copy the selected link.");
    }
  });
  $("another").addEventListener("click", () => {
    $("result").hidden = true;
    $("create-form").hidden = false;
    $("link").value = "";
    $("file").value = "";
    status("");
  });
})();
