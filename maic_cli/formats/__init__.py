"""The lesson formats: a lesson leaves maic as a file another program or a person opens.

One module per format, a writer (and where there is one, a reader) side by side: the web player in one page
(``player``, its voice track ``player_voice``, its script and style in ``player_assets/``) and the SCORM 1.2
package an LMS imports (``scorm``).
"""
