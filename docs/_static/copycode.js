/* Copy buttons: docs/_ext/bookext/copycode.py */
(() => {
  const live = document.body.appendChild(document.createElement("div"));
  live.className = "ffn-sr";
  live.role = "status";
  const prompt = /^(>>>|\.\.\.)( |$)/;
  for (const box of document.querySelectorAll("article div.highlight")) {
    const pre = box.querySelector("pre");
    if (!pre || box.closest(".cell_output")) continue;
    const button = box.appendChild(document.createElement("button"));
    button.className = "ffn-copy";
    button.textContent = "Copy";
    button.ariaLabel = "Copy code";
    button.onclick = () => {
      const lines = pre.textContent.trimEnd().split("\n");
      const typed = lines.filter((l) => prompt.test(l)).map((l) => l.slice(4));
      navigator.clipboard.writeText((typed.length ? typed : lines).join("\n"))
        .then(() => "Copied", () => "Copy failed")
        .then((said) => {
          live.textContent = button.textContent = said;
          setTimeout(() => { live.textContent = ""; button.textContent = "Copy"; }, 2000);
        });
    };
  }
})();
