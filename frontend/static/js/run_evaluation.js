// Run page: the evaluation panel (being built).
(function (RunPage) {
  "use strict";
})(window.RunPage = window.RunPage || {});
