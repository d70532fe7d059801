// Shows the failure note after a refused sign-in (?failed=1).
"use strict";
if (new URLSearchParams(location.search).has("failed")) {
  document.getElementById("login-failed").classList.remove("hidden");
}
