/* ReasonScape web apps: the few browser-side callbacks (no network access, no external code). */
window.dash_clientside = Object.assign({}, window.dash_clientside, {
  rs: {
    /* Keep every explorer surface on the camera of the one the user just turned. */
    syncCameras: function (relayouts, sync) {
      const nothing = window.dash_clientside.no_update;
      const trig = (window.dash_clientside.callback_context || {}).triggered || [];
      if (!sync || sync.indexOf("sync") < 0 || !trig.length || !trig[0].value) { return nothing; }
      const update = trig[0].value;
      const camera = update["scene.camera"];
      if (!camera) { return nothing; }
      const wanted = JSON.stringify(camera);
      document.querySelectorAll("#ex-main .js-plotly-plot").forEach(function (g) {
        const scene = g.layout && g.layout.scene;
        if (scene && JSON.stringify(scene.camera) !== wanted) {
          window.Plotly.relayout(g, {"scene.camera": camera});
        }
      });
      return wanted;
    },
    /* A click on a point answers at once, before the server has read the point's samples. */
    pointPending: function (clicks) {
      const trig = (window.dash_clientside.callback_context || {}).triggered || [];
      if (!trig.length || !trig[0].value) { return window.dash_clientside.no_update; }
      return {type: "Div", namespace: "dash_html_components",
              props: {children: "Reading the clicked point and its samples…", className: "rs-note rs-pending",
                      id: "ex-point-pending"}};
    },
    /* Show the end of the sample's answer (where the final answer is) and bring it into view. */
    scrollAnswer: function () {
      const panel = document.getElementById("ex-point");
      if (panel) { panel.classList.remove("rs-pending-panel"); }
      setTimeout(function () {
        const answer = document.getElementById("ex-sample-answer");
        if (answer) {
          answer.scrollTop = answer.scrollHeight;
          const reasoning = document.getElementById("ex-sample-reasoning");
          if (reasoning) { reasoning.scrollTop = reasoning.scrollHeight; }
        }
      }, 50);
      return window.dash_clientside.no_update;
    }
  }
});

/* Explorer: a press released on a hovered point marks the point panel at once ("reading ...");
   plotly's 3-D click event itself comes a few frames later. Only plotly's own hover state is read. */
(function () {
  document.addEventListener("mouseover", function (event) {
    const graph = event.target.closest && event.target.closest("#ex-main .js-plotly-plot");
    if (graph && graph.on && !graph.__rsTracked) {
      graph.__rsTracked = true;
      graph.on("plotly_hover", function () { graph.__rsOnPoint = true; });
      graph.on("plotly_unhover", function () { graph.__rsOnPoint = false; });
    }
  }, true);
  let down = null;
  document.addEventListener("mousedown", function (event) { down = [event.clientX, event.clientY]; }, true);
  document.addEventListener("mouseup", function (event) {
    const graph = event.target.closest && event.target.closest("#ex-main .js-plotly-plot");
    const still = down && Math.abs(event.clientX - down[0]) + Math.abs(event.clientY - down[1]) < 4;
    const panel = document.getElementById("ex-point");
    if (graph && graph.__rsOnPoint && still && panel) { panel.classList.add("rs-pending-panel"); }
  }, true);
})();

/* Explorer: 3-D scenes drawn by a software renderer (no GPU: SwiftShader, llvmpipe) skip WebGL's
   multisample antialiasing. plotly asks for it unconditionally; in software it multiplies the cost
   of every pixel, and three surfaces took ~0.4 s longer to appear (docs/performance.md). On a GPU
   nothing changes. The renderer is read once, from a throwaway context, on the first WebGL request. */
(function () {
  const original = HTMLCanvasElement.prototype.getContext;
  const isWebGL = (kind) => kind === "webgl" || kind === "experimental-webgl" || kind === "webgl2";
  let software = null;
  function detect() {
    try {
      const gl = original.call(document.createElement("canvas"), "webgl");
      if (!gl) { return false; }
      const info = gl.getExtension("WEBGL_debug_renderer_info");
      const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
      const lose = gl.getExtension("WEBGL_lose_context");
      if (lose) { lose.loseContext(); }
      return /swiftshader|llvmpipe|softpipe|software/i.test(name);
    } catch (e) {
      return false;
    }
  }
  HTMLCanvasElement.prototype.getContext = function (kind, attrs) {
    if (isWebGL(kind) && attrs && attrs.antialias) {
      if (software === null) { software = detect(); }
      if (software) { attrs = Object.assign({}, attrs, {antialias: false}); }
    }
    return original.call(this, kind, attrs);
  };
  window.rsSoftwareWebGL = function () { return software; };
})();

/* The tables' rows arrive sorted by the server over every row of the view (resolver/web/grid.py):
   the grid's own sort must keep that order, so every pair of rows compares equal. */
window.dashAgGridFunctions = Object.assign({}, window.dashAgGridFunctions, {
  rsKeepOrder: function () { return 0; },
});
