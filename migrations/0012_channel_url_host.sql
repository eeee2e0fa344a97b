-- A notification channel's URL is a credential (issue 42): it has been sealed whole in url_secret
-- since channels exist, but url kept it in clear with only some parts masked (a webhook's path
-- stayed). From now on url holds the scheme and host alone; this cuts the stored values down so.
-- Stored values are `new URL(…).toString()` forms (or a Slack URL's masked form): the host ends
-- at the first "/" after "://". Rows a Worker of the version before writes after this runs are
-- cut down when the new version first reads them (src/notifications/channels.ts, hostOnly).
UPDATE notification_channels
SET url = substr(url, 1, instr(url, '://') + 2)
  || CASE
       WHEN instr(substr(url, instr(url, '://') + 3), '/') > 0
       THEN substr(substr(url, instr(url, '://') + 3), 1, instr(substr(url, instr(url, '://') + 3), '/') - 1)
       ELSE substr(url, instr(url, '://') + 3)
     END
WHERE instr(url, '://') > 0;
