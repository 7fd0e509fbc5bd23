// Refreshes the parts of a page marked data-live (the overview's figures)
// every few seconds, without a reload; nothing else on the dashboard needs
// script.
"use strict";
document.querySelectorAll("[data-live]").forEach(function (el) {
  setInterval(function () {
    fetch(el.dataset.live, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) { el.innerHTML = html; })
      .catch(function () { /* keep the last figures; the next tick retries */ });
  }, 3000);
});
