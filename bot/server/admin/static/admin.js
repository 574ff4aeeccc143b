// Draws the Overview's charts with the bundled Chart.js from the figures the page carries as JSON
// (<script type="application/json" id="chart-data">): no inline script, nothing fetched from elsewhere.
(function () {
  "use strict";
  var source = document.getElementById("chart-data");
  if (!source || typeof Chart === "undefined") { return; }
  var data = JSON.parse(source.textContent);
  var answered = "#2b6cb0", missed = "#dd6b20", helpful = "#2f855a";
  Chart.defaults.font.family = "system-ui, sans-serif";
  Chart.defaults.animation = false;  // printable at once, and steady in screenshots
  var perDay = document.getElementById("per-day");
  if (perDay) {
    new Chart(perDay, {
      type: "bar",
      data: {
        labels: data.days,
        datasets: [
          { label: "Answered", data: data.answered, backgroundColor: answered, stack: "q" },
          { label: "Not answered", data: data.not_answered, backgroundColor: missed, stack: "q" }
        ]
      },
      options: { responsive: true, maintainAspectRatio: false,
                 scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }
    });
  }
  var byPlatform = document.getElementById("by-platform");
  if (byPlatform) {
    var percent = function (values) { return values.map(function (v) { return v === null ? null : v * 100; }); };
    new Chart(byPlatform, {
      type: "bar",
      data: {
        labels: data.platforms,
        datasets: [
          { label: "Answered %", data: percent(data.platform_answer_rate), backgroundColor: answered },
          { label: "Helpful % (of ratings)", data: percent(data.platform_helpful_rate), backgroundColor: helpful }
        ]
      },
      options: { responsive: true, maintainAspectRatio: false,
                 scales: { y: { beginAtZero: true, max: 100, ticks: { callback: function (v) { return v + "%"; } } } } }
    });
  }
  var byChannel = document.getElementById("by-channel");
  if (byChannel) {
    new Chart(byChannel, {
      type: "bar",
      data: {
        labels: data.channels,
        datasets: [
          { label: "Answered", data: data.channel_answered, backgroundColor: answered, stack: "q" },
          { label: "Not answered", data: data.channel_not_answered, backgroundColor: missed, stack: "q" }
        ]
      },
      options: { indexAxis: "y", responsive: true, maintainAspectRatio: false,
                 scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true } } }
    });
  }
  document.body.setAttribute("data-charts", "drawn");
})();
