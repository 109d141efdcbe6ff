// Run page: the alarms panel (being built).
(function (RunPage) {
  "use strict";
})(window.RunPage = window.RunPage || {});
