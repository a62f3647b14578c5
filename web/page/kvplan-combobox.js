// The model picker: a text field with a list of catalog models that narrows as one types, after
// WAI-ARIA's combobox pattern (a list that pops up; the focus stays in the field and
// aria-activedescendant names the highlighted option), so a screen reader announces each option
// and the keyboard does everything: Down/Up move, Enter takes one, Escape closes. The field stays
// free text: a Hugging Face id, a path of a dropped file or anything the CLI takes is typed as is.
(function (root) {
  "use strict";

  const MAX_SHOWN = 30;  // a longer list helps nobody: typing narrows it

  /// Entries [{value, label, keys}] whose keys hold every typed word, the ones whose value starts
  /// with the text first.
  function matching(entries, text) {
    const words = text.toLowerCase().split(/\s+/).filter((w) => w.length > 0);
    if (words.length === 0) return entries.slice(0, MAX_SHOWN);
    const found = entries.filter((entry) => words.every((word) => entry.search.includes(word)));
    const prefix = text.trim().toLowerCase();
    const starts = found.filter((entry) => entry.value.toLowerCase().startsWith(prefix));
    const rest = found.filter((entry) => !entry.value.toLowerCase().startsWith(prefix));
    return starts.concat(rest).slice(0, MAX_SHOWN);
  }

  /// Makes `input` (role=combobox) and `list` (role=listbox) a combobox; onChoose(value) runs when
  /// an option is taken. Returns {setEntries}.
  function attach(input, list, onChoose) {
    let entries = [];
    let shown = [];
    let active = -1;

    function close() {
      list.hidden = true;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
      active = -1;
    }

    function highlight(index) {
      active = index;
      [...list.children].forEach((option, i) => option.setAttribute("aria-selected", String(i === index)));
      if (index < 0) { input.removeAttribute("aria-activedescendant"); return; }
      input.setAttribute("aria-activedescendant", list.children[index].id);
      list.children[index].scrollIntoView({block: "nearest"});
    }

    function open() {
      shown = matching(entries, input.value);
      // The text is already a catalog id: nothing to offer.
      if (shown.length === 0 || (shown.length === 1 && shown[0].value === input.value.trim())) { close(); return; }
      list.textContent = "";
      shown.forEach((entry, i) => {
        const option = document.createElement("li");
        option.id = `${list.id}-${i}`;
        option.setAttribute("role", "option");
        option.setAttribute("aria-selected", "false");
        option.dataset.value = entry.value;
        option.appendChild(document.createTextNode(entry.value));
        if (entry.label && entry.label !== entry.value) {
          const label = document.createElement("small");
          label.textContent = ` ${entry.label}`;
          option.appendChild(label);
        }
        // mousedown would blur the field (and close the list) before the click lands.
        option.addEventListener("mousedown", (event) => event.preventDefault());
        option.addEventListener("click", () => choose(i));
        list.appendChild(option);
      });
      list.hidden = false;
      input.setAttribute("aria-expanded", "true");
      active = -1;
    }

    function choose(index) {
      const value = shown[index].value;
      close();
      input.value = value;
      onChoose(value);
    }

    input.addEventListener("input", open);
    input.addEventListener("blur", close);
    input.addEventListener("keydown", (event) => {
      const isOpen = !list.hidden;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (!isOpen) { open(); if (list.hidden) return; }
        const step = event.key === "ArrowDown" ? 1 : -1;
        highlight(active < 0 ? (step > 0 ? 0 : shown.length - 1) : (active + step + shown.length) % shown.length);
      } else if (event.key === "Enter" && isOpen && active >= 0) {
        event.preventDefault();
        choose(active);
      } else if (event.key === "Escape" && isOpen) {
        event.preventDefault();
        close();
      }
    });

    return {
      /// [{value, label, keys: [words to match]}]: the catalog's ids, names and aliases.
      setEntries(list) {
        entries = list.map((entry) => Object.assign({}, entry, {search: [entry.value, entry.label || "", ...(entry.keys || [])].join(" ").toLowerCase()}));
      },
    };
  }

  const api = {attach, matching};
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.KvplanCombobox = api;
})(typeof globalThis !== "undefined" ? globalThis : this);
