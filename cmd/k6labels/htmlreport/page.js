// k6labels flame graphs: click a frame to zoom in on it, the top frame to
// zoom out. With #selftest in the address the page checks itself and writes
// the result into <pre id="selftest"> (the browser test reads it).
"use strict";
var k6lErrors = [];
window.addEventListener("error", function (e) { k6lErrors.push(String(e.message || e)); });
(function () {
  var orig = console.error;
  console.error = function () { k6lErrors.push(Array.prototype.join.call(arguments, " ")); orig.apply(console, arguments); };
})();

var k6lCharW = 6.6, k6lPad = 4;

function k6lLabel(name, w) {
  var n = Math.floor((w - 2 * k6lPad) / k6lCharW);
  if (n < 3) return "";
  return name.length <= n ? name : name.slice(0, n - 1) + "\u2026";
}

// k6lZoom shows frame g across the whole width of its graph: its
// ancestors span the width, its descendants scale with it, others hide.
function k6lZoom(svg, g) {
  var W = +svg.dataset.w, x0 = +g.dataset.x0, x1 = +g.dataset.x1, d = +g.dataset.d;
  var eps = 1e-9, span = x1 - x0;
  svg.querySelectorAll("g.f").forEach(function (f) {
    var a = +f.dataset.x0, b = +f.dataset.x1, fd = +f.dataset.d, x, w;
    if (fd < d && a <= x0 + eps && b >= x1 - eps) { x = 0; w = W; }
    else if (fd >= d && a >= x0 - eps && b <= x1 + eps) { x = (a - x0) / span * W; w = (b - a) / span * W; }
    else { f.style.display = "none"; return; }
    f.style.display = "";
    var r = f.querySelector("rect"), t = f.querySelector("text");
    r.setAttribute("x", x.toFixed(1)); r.setAttribute("width", w.toFixed(1));
    t.setAttribute("x", (x + k6lPad).toFixed(1)); t.textContent = k6lLabel(f.dataset.n, w);
  });
  svg.dataset.zoomed = d === 0 ? "" : g.dataset.n;
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("svg.fg").forEach(function (svg) {
    svg.addEventListener("click", function (e) {
      var g = e.target.closest("g.f");
      if (g) k6lZoom(svg, g);
    });
  });
  if (location.hash === "#selftest") k6lSelfTest();
});

// k6lSelfTest clicks, in the first flame graph, the widest frame below
// the top that spans 5% to 70% of it, checks that it then spans the graph
// and that frames outside it are hidden, clicks the top frame and checks
// that the frame is back to its width.
function k6lSelfTest() {
  var out = { graphs: document.querySelectorAll("svg.fg").length, frames: document.querySelectorAll("svg.fg g.f").length, zoomed: false, unzoomed: false, errors: k6lErrors };
  var svg = document.querySelector("svg.fg");
  if (svg) {
    var best = null, top = svg.querySelector("g.f");
    var frac = function (f) { return f.dataset.x1 - f.dataset.x0; };
    svg.querySelectorAll("g.f").forEach(function (f) {
      if (+f.dataset.d > 0 && frac(f) >= 0.05 && frac(f) <= 0.7 && (!best || frac(f) > frac(best))) best = f;
    });
    if (best) {
      var width = function () { return +best.querySelector("rect").getAttribute("width"); };
      var before = width();
      best.querySelector("rect").dispatchEvent(new MouseEvent("click", { bubbles: true }));
      var after = width(), hidden = 0;
      svg.querySelectorAll("g.f").forEach(function (f) { if (f.style.display === "none") hidden++; });
      out.clicked = best.dataset.n; out.widthBefore = before; out.widthAfter = after; out.hidden = hidden;
      out.zoomed = svg.dataset.zoomed === best.dataset.n && Math.abs(after - +svg.dataset.w) < 0.5 && before < after && hidden > 0;
      top.querySelector("rect").dispatchEvent(new MouseEvent("click", { bubbles: true }));
      out.unzoomed = Math.abs(width() - before) < 0.5 && svg.dataset.zoomed === "";
    }
  }
  var pre = document.createElement("pre");
  pre.id = "selftest";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
