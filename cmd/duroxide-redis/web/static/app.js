// Refreshes the parts of a page marked data-live (the overview's figures, a
// running instance's status and what it waits for) every few seconds,
// without a reload; nothing else on the dashboard needs script. A refreshed
// part that holds data-done (the instance finished) stops the refreshes and
// reloads the page once, so the history and the actions show the end.
"use strict";
document.querySelectorAll("[data-live]").forEach(function (el) {
  var timer = setInterval(function () {
    fetch(el.dataset.live, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        el.innerHTML = html;
        if (el.querySelector("[data-done]")) {
          clearInterval(timer);
          location.reload();
        }
      })
      .catch(function () { /* keep the last figures; the next tick retries */ });
  }, 3000);
});
