package com.example.slug;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.commons.lang3.StringUtils;

/** Turns titles into URL slugs: lower case, accents stripped, words joined by dashes. */
public final class Slugs {

    private Slugs() {
    }

    public static String slugify(String title) {
        if (title == null || title.trim().isEmpty()) {
            throw new IllegalArgumentException("title must not be blank");
        }
        String plain = StringUtils.stripAccents(title).toLowerCase();
        StringBuilder slug = new StringBuilder();
        boolean dash = false;
        for (char c : plain.toCharArray()) {
            if (Character.isLetterOrDigit(c)) {
                slug.append(c);
                dash = false;
            } else if (!dash && slug.length() > 0) {
                slug.append('-');
                dash = true;
            }
        }
        return StringUtils.removeEnd(slug.toString(), "-");
    }

    public static List<String> slugifyAll(List<String> titles) {
        List<String> slugs = new ArrayList<String>();
        for (String title : titles) {
            slugs.add(slugify(title));
        }
        return Collections.unmodifiableList(slugs);
    }
}
