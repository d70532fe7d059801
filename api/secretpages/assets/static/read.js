// read.js: the /v/ and /f/ pages. Nothing is fetched until the reader
// clicks, so link previews do not use a view. The key stays in the fragment.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const kind = document.body.dataset.kind; // "v" or "f"
  const status = (msg, cls) => { $("status").textContent = msg; $("status").className = cls || ""; };
  let link;
  try {
    link = { origin: location.origin, kind, ...OTS.parseFragment(location.hash) };
  } catch (e) {
    $("intro").hidden = true;
    status(e.message, "error");
    return;
  }

  function size(n) {
    const u = ["bytes", "KiB", "MiB"];
    let i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + " " + u[i];
  }

  async function open(passphrase) {
    const btns = [$("reveal"), $("unlock")];
    btns.forEach((b) => { b.disabled = true; });
    status("Opening…");
    try {
      let left;
      if (kind === "v") {
        const r = await OTS.readText(link, passphrase);
        $("secret").value = r.text;
        left = r.viewsLeft;
      } else {
        const r = await OTS.readFile(link, passphrase);
        const blob = new Blob([r.data], { type: "application/octet-stream" });
        const a = $("download");
        a.href = URL.createObjectURL(blob);
        a.download = String(r.meta.name || "secret-file").replace(/[\/\\]/g, "_");
        $("file-info").textContent = `${a.download} (${size(r.data.length)})`;
        left = r.viewsLeft;
      }
      // The key has done its job: drop it from the address bar and history.
      history.replaceState(null, "", location.pathname);
      $("intro").hidden = true;
      $("pass-form").hidden = true;
      $("result").hidden = false;
      $("views-left").textContent = left === 0 || left === undefined
        ? "This was the last view: the secret is now deleted from the server."
        : `${left} view(s) left.`;
      status("");
    } catch (e) {
      if (e instanceof OTS.OTSError && e.kind === "wrong-key") {
        $("intro").hidden = true;
        $("pass-form").hidden = false;
        status(passphrase ? "Wrong passphrase. Try again." : e.message, "error");
        $("passphrase").value = "";
        $("passphrase").focus();
      } else {
        status(e instanceof OTS.OTSError ? e.message : "Something went wrong: " + e.message, "error");
        if (e instanceof OTS.OTSError && e.kind === "no-message") { $("intro").hidden = true; $("pass-form").hidden = true; }
      }
    } finally {
      btns.forEach((b) => { b.disabled = false; });
    }
  }

  $("reveal").addEventListener("click", () => open(""));
  $("pass-form").addEventListener("submit", (ev) => { ev.preventDefault(); open($("passphrase").value); });
  if ($("copy")) {
    $("copy").addEventListener("click", async () => {
      try { await navigator.clipboard.writeText($("secret").value); status("Copied.", "ok"); } catch (e) { $("secret").select(); }
    });
  }
})();
