// Run page: the run's websocket (/ws/runs/<id>/, runs/live/consumers.py), reconnected after a drop.
// Delivery is at-most-once: every `run.hello` (the first and each after a reconnect) calls
// onHello, whose promise re-fetches over REST whatever may have been missed; only when that
// is done does the indicator say "live" again.
(function (RunPage) {
  "use strict";

  const NOT_FOUND = 4404; // the consumer's answer for a run that is gone or not ours
  const ACCESS_LOST = 4403; // the run was ours when the socket opened, and no longer is: no retry
  const RETRY_MS = [500, 1000, 2000, 4000, 8000, 15000];

  class LiveSocket {
    constructor(path, { onHello, onEvent, onState }) {
      this.url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
      this.onHello = onHello;
      this.onEvent = onEvent;
      this.onState = onState;
      this.attempts = 0;
      this.socket = null;
      this.timer = null;
    }

    connect() {
      this.onState(this.attempts ? "reconnecting" : "connecting");
      const socket = new WebSocket(this.url);
      this.socket = socket;
      socket.addEventListener("message", (message) => this.received(socket, message));
      socket.addEventListener("close", (event) => this.closed(socket, event));
    }

    received(socket, message) {
      if (socket !== this.socket) return;
      let event;
      try { event = JSON.parse(message.data); } catch (error) { return; }
      if (event.type !== "run.hello") { this.onEvent(event); return; }
      this.onState("catching-up");
      Promise.resolve(this.onHello(event.payload))
        .then(() => { if (socket === this.socket && socket.readyState === WebSocket.OPEN) { this.attempts = 0; this.onState("live"); } })
        .catch(() => { if (socket === this.socket) socket.close(); }); // try again from a fresh connection
    }

    closed(socket, event) {
      if (socket !== this.socket) return;
      this.socket = null;
      if (event.code === NOT_FOUND) { this.onState("gone"); return; }
      if (event.code === ACCESS_LOST) { this.onState("access-lost"); return; }
      const delay = RETRY_MS[Math.min(this.attempts, RETRY_MS.length - 1)];
      this.attempts += 1;
      this.onState("reconnecting", delay);
      this.timer = setTimeout(() => this.connect(), delay);
    }

    /* Reconnect now (the indicator's "retry" button) instead of waiting out the delay. */
    retryNow() {
      if (this.socket) return;
      clearTimeout(this.timer);
      this.connect();
    }
  }

  RunPage.LiveSocket = LiveSocket;
  // Panels in scripts of their own register here before run_page.js puts the page together:
  // liveHandlers[type](payload) for live messages, catchUps for what to re-fetch on (re)connect.
  RunPage.liveHandlers = RunPage.liveHandlers || {};
  RunPage.catchUps = RunPage.catchUps || [];
})(window.RunPage = window.RunPage || {});
