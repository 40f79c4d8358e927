/* Copy buttons: docs/_ext/bookext/website/copycode.py */
(() => {
  const live = document.body.appendChild(document.createElement("div"));
  live.className = "ffn-sr";
  live.role = "status";
  // Prompts a reader does not type: Python's (">>> ", "... ") and a shell's ("$ ").
  const prompt = /^(>>>|\.\.\.|\$)( |$)/;
  for (const box of document.querySelectorAll("article div.highlight")) {
    const pre = box.querySelector("pre");
    if (!pre || box.closest(".cell_output")) continue;
    const button = document.createElement("button");
    button.className = "ffn-copy";
    button.textContent = "Copy";
    button.ariaLabel = "Copy code";
    // In a bar of its own above the code (ffnbook.css), so it never covers a line.
    box.prepend(button);
    box.classList.add("ffn-has-copy");
    button.onclick = () => {
      const lines = pre.textContent.trimEnd().split("\n");
      // A session with prompts: only the typed lines, without their prompts.
      const typed = lines.filter((l) => prompt.test(l)).map((l) => l.replace(prompt, ""));
      navigator.clipboard.writeText((typed.length ? typed : lines).join("\n"))
        .then(() => "Copied", () => "Copy failed")
        .then((said) => {
          live.textContent = button.textContent = said;
          setTimeout(() => { live.textContent = ""; button.textContent = "Copy"; }, 2000);
        });
    };
  }
})();
